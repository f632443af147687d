"""Writers turn the cited lines into the hand-off text. The deterministic writer is the default; an LLM
writer can be configured (SUMMARY_WRITER, a dotted path) and receives only the lines, never other data,
so what it may say is bounded by what the lines cite."""

from __future__ import annotations

from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string

from governance.summaries.builder import SECTION_TITLES, SECTIONS, SummaryLine


class SummaryWriter(Protocol):
    name: str

    def write(self, *, scope_path: str, lines: list[SummaryLine]) -> str: ...


class DeterministicWriter:
    """Markdown: one heading per section, one bullet per line, each ending with its memory ids."""

    name = "deterministic"

    def write(self, *, scope_path: str, lines: list[SummaryLine]) -> str:
        out = [f"# Summary of {scope_path}"]
        for section in SECTIONS:
            rows = [line for line in lines if line.section == section]
            if not rows:
                continue
            out.append(f"\n## {SECTION_TITLES[section]}")
            for line in rows:
                cite = f" [{', '.join(f'm{i}' for i in line.memory_ids)}]" if line.memory_ids else ""
                nature = f"({line.nature}) " if line.nature else ""
                out.append(f"- {nature}{line.text}{replaced_by(line.replaced_by)}{cite}")
        return "\n".join(out) + "\n"


def replaced_by(member: dict | None) -> str:
    """A corrected requirement's replacement, as written after it."""
    return f" → replaced by: {member.get('text', '')}" if member else ""


def get_writer() -> SummaryWriter:
    path = getattr(settings, "SUMMARY_WRITER", "")
    return import_string(path)() if path else DeterministicWriter()
