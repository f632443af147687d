"""Derived summaries of a scope: built deterministically from the structured memory (builder), turned
into text by a writer (deterministic by default; an LLM writer can be plugged in behind the interface)."""
