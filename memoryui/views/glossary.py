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
        Term("candidate", "Candidate",
             "Written fast (often by an agent), not yet trusted, not yet in the review queue.",
             "A memory written fast and not yet trusted: an agent's guess, a preference it noticed. Recall may "
             "use it only as evidence marked unconfirmed. It waits until it is proposed (by its writer or by "
             "promotion, once seen in enough sessions), rejected, retired or forgotten."),
        Term("proposed", "Proposed",
             "Waiting in the review queue for a person with the confirm right to confirm or reject it.",
             "A memory that asks a person for a decision: it is in the review queue until a reviewer, curator or "
             "owner of its scope confirms it (it becomes active) or rejects it. A rule-like write by an agent "
             "becomes proposed even when the agent asked for active. Like a candidate, recall shows it only as "
             "unconfirmed evidence."),
        Term("tier", "Tier",
             "How lasting a memory is meant to be: short-term trace, mid-term abstraction or long-term commitment.",
             "Short-term trace (what happened in a session), mid-term abstraction (a summary or a pattern drawn "
             "from traces), long-term commitment (a rule or preference that should hold until someone changes "
             "it). In a four-eyes scope a long-term commitment needs two people to put it in force and two to "
             "end it."),
        Term("activation", "Activation",
             "How present a memory is now: A(t) decays with time and rises each time a recall uses it.",
             "A(t) = A0·e^(−λ(t−t0)) + Σ wᵢ·e^(−λ(t−tᵢ)): a starting value that decays at a rate λ per day set by "
             "the kind of memory (working memory fades in hours, conventions over months), plus a jump for each "
             "reinforcement (a recall that used it, a reviewer's boost), each decaying the same way. It is a "
             "unitless number: ranking weighs it, and below the cold threshold a memory turns cold."),
        Term("in-force", "In force",
             "Active and confirmed by a person with the confirm right: it can be pinned as a constraint.",
             "An active memory that a person with the confirm right on its scope confirmed (or wrote). Only such a "
             "memory is pinned as a constraint or preference in a context packet, overrides a rule of a parent "
             "scope, or wins a contradiction for being in force. An agent's write is never in force until a "
             "person confirms it; it is shown as unconfirmed."),
        Term("four-eyes", "Four-eyes",
             "Two different people must agree: to confirm or to end a long-term commitment in such a scope.",
             "A scope (or any scope above it) can require two reviewers. There, putting a long-term commitment in "
             "force takes approvals from two different people (the queue shows \"1 of 2\"), and ending one "
             "(supersede, retire, forget, or replacing it by confirming another revision of its key) takes a "
             "request from two different people: the first call records the request and changes nothing else."),
        Term("cold", "Cold",
             f"Activation below the cold threshold ({cold:g}): out of the hot set, recalled only on a strong match.",
             f"A memory whose activation fell below MEMORY_COLD_THRESHOLD ({cold:g}). It leaves the hot set that "
             "recall ranks first, but it is not gone: it still comes back as evidence when its match is strong "
             "enough (enough of the query's words, or a vector match close to the best), and after every hot "
             "match while the answer is not full. Cold working memory never comes back."),
    ]


def term(slug: str) -> Term:
    return next(t for t in terms() if t.slug == slug)


@dashboard_view()
def glossary(request):
    return page(request, "dashboard/glossary.html", {"terms": terms(), "nav": "glossary"})
