"""Glossary: the words the pages use for the domain, each with a short form (tooltips, `{% help %}`) and a
longer one (the glossary page). Texts follow what the code does (governance.models, permissions, recall)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from memoryui.views.base import dashboard_view, page


@dataclass(frozen=True)
class Term:
    slug: str
    name: str
    short: str
    long: str


def terms() -> list[Term]:
    cold = settings.MEMORY_COLD_THRESHOLD
    return [
        Term(
            "candidate",
            "Candidate",
            "Written fast (often by an agent), not yet trusted, not yet in the review queue.",
            "A memory written fast and not yet trusted: an agent's guess, a preference it noticed. Recall may "
            "use it only as evidence marked unconfirmed. It waits until it is proposed (by its writer or by "
            "promotion, once seen in enough sessions), rejected, retired or forgotten.",
        ),
        Term(
            "proposed",
            "Proposed",
            "Waiting in the review queue for a person with the confirm right to confirm or reject it.",
            "A memory that asks a person for a decision: it is in the review queue until a reviewer, curator or "
            "owner of its scope confirms it (it becomes active) or rejects it. A rule-like write by an agent "
            "becomes proposed even when the agent asked for active. Like a candidate, recall shows it only as "
            "unconfirmed evidence.",
        ),
        Term(
            "tier",
            "Tier",
            "How lasting a memory is meant to be: short-term trace, mid-term abstraction or long-term commitment.",
            "Short-term trace (what happened in a session), mid-term abstraction (a summary or a pattern drawn "
            "from traces), long-term commitment (a rule or preference that should hold until someone changes "
            "it). In a four-eyes scope a long-term commitment needs two people to put it in force and two to "
            "end it.",
        ),
        Term(
            "activation",
            "Activation",
            "How present a memory is now: A(t) decays with time and rises each time a recall uses it.",
            "A(t) = A0·e^(−λ(t−t0)) + Σ wᵢ·e^(−λ(t−tᵢ)): a starting value that decays at a rate λ per day set by "
            "the kind of memory (working memory fades in hours, conventions over months), plus a jump for each "
            "reinforcement (a recall that used it, a reviewer's boost), each decaying the same way. It is a "
            "unitless number: ranking weighs it, and below the cold threshold a memory turns cold.",
        ),
        Term(
            "in-force",
            "In force",
            "Active and confirmed by a person with the confirm right: it can be pinned as a constraint.",
            "An active memory that a person with the confirm right on its scope confirmed (or wrote). Only such a "
            "memory is pinned as a constraint or preference in a context packet, overrides a rule of a parent "
            "scope, or wins a contradiction for being in force. An agent's write is never in force until a "
            "person confirms it; it is shown as unconfirmed.",
        ),
        Term(
            "four-eyes",
            "Four-eyes",
            "Two different people must agree: to confirm or to end a long-term commitment in such a scope.",
            "A scope (or any scope above it) can require two reviewers. There, putting a long-term commitment in "
            "force takes approvals from two different people (the queue shows \"1 of 2\"), and ending one "
            "(supersede, retire, forget, or replacing it by confirming another revision of its key) takes a "
            "request from two different people: the first call records the request and changes nothing else.",
        ),
        Term(
            "cold",
            "Cold",
            f"Activation below the cold threshold ({cold:g}): out of the hot set, recalled only on a strong match.",
            f"A memory whose activation fell below MEMORY_COLD_THRESHOLD ({cold:g}). It leaves the hot set that "
            "recall ranks first, but it is not gone: it still comes back as evidence when its match is strong "
            "enough (enough of the query's words, or a vector match close to the best), and after every hot "
            "match while the answer is not full. Cold working memory never comes back.",
        ),
        Term(
            "confidence",
            "Confidence",
            "How sure the writer was, from 0 to 1 (0.40: a guess; 0.90: stated plainly).",
            "A number from 0 to 1 that the writer (an agent, an import, a person) gives with the memory: how "
            "sure it is that the text is right. It does not put anything in force; when two memories contradict "
            "each other and neither is confirmed, the higher confidence wins.",
        ),
        Term(
            "packet",
            "Context packet",
            "What an agent gets for one turn: memories in slots (constraints, evidence, …) within a token budget.",
            "The answer to one request for context: the memories chosen for the query, placed in slots "
            "(constraints in force, recent interaction, evidence, preferences, relations, external evidence, "
            "negative context), each with its score and reason, within the token budget; what was left out is "
            "listed as skipped with the stage and the reason. Each stored packet is a turn.",
        ),
        Term(
            "stage",
            "Stage",
            "One step of assembling a packet: where to look, the searches, fusion, adjudication, ranking, packing.",
            "A packet is assembled in stages: eligible (which scopes and memories may be used), the search "
            "paths side by side (by words, by meaning, recent turns, keyed facts), fuse (the lists merged), "
            "adjudicate (supersedes and contradictions settled), rank (scores; cold weak matches dropped) and "
            "pack (slots within the budget). A turn's page shows what each stage let in and left out.",
        ),
        Term(
            "supersede",
            "Supersede",
            "Replace a memory with a new revision: the old one stays, marked superseded, no longer in force.",
            "A change of content is a new memory (a revision of the same key) that supersedes the old one. The "
            "old one is kept with its history and marked superseded: recall no longer uses it, except in the "
            "negative context to say what changed.",
        ),
        Term(
            "retire",
            "Retire",
            "End a memory that is no longer useful: kept, with its text, but never recalled again.",
            "Retiring ends a memory without replacing it: it keeps its text and history and anyone who may "
            "read its scope still sees it, but recall never uses it again. It cannot be undone; write a new "
            "memory instead.",
        ),
        Term(
            "forget",
            "Forget",
            "Withhold a memory's text from everyone (soft) or erase it (purge): never recalled or shown again.",
            "Forgetting withholds a memory's text everywhere: recall, search, stored turns, summaries and "
            "exports show it as forgotten. A soft forget keeps the text for owners; a purge erases it from the "
            "database and every derived store, leaving a tombstone. It cannot be undone.",
        ),
        Term(
            "revoke",
            "Revoke",
            "Take a grant or an API token away; only owners change grants, and a reason is kept in the audit log.",
            "Revoking ends a grant (a role on a scope) or an API token at once. Only owners of the scope may "
            "revoke grants, never leaving a scope without an owner; each revoke asks for a reason, kept in the "
            "audit log.",
        ),
    ]


def term(slug: str) -> Term:
    return next(t for t in terms() if t.slug == slug)


@dashboard_view()
def glossary(request):
    return page(request, "dashboard/glossary.html", {"terms": terms(), "nav": "glossary"})
