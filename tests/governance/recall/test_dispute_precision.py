"""Dispute precision on the demo data (issue 25): a new user's review queue must not open with false
disputes. The live worker's rule (governance/recall/disputes.py, after every embedding delivery, the real
model) proposes on the demo exactly its one real unkeyed change, the user's "export as PDF" turn and the
later "send PPTX from now on, not PDF" turn; never two tool calls or two tool results (traces of what
happened, written by the demo without a role), nor a fact that mentions the decks beside a rule about
their format."""

from __future__ import annotations

import pytest

from devtools import demo
from governance.models import Dispute, Memory, OutboxDelivery, Scope
from governance.propagation import run_delivery
from governance.services.conflict import unkeyed_contradiction
from governance.services.memory import MemoryInput, memory_record

pytestmark = pytest.mark.django_db


def _embed_deliveries():
    for delivery in OutboxDelivery.objects.filter(store="embedding").exclude(state=OutboxDelivery.State.DONE):
        run_delivery(delivery)


def _pairs():
    return {(d.newer.text, d.older.text) for d in Dispute.objects.select_related("newer", "older")}


PDF = "Please export the Q3 review deck as PDF when it is ready."
PPTX = "The client wants to edit the slides themselves, so send PPTX from now on, not PDF."


def test_the_demo_proposes_its_one_real_change_and_no_false_dispute():
    demo.load_demo()
    _embed_deliveries()
    assert _pairs() == {(PPTX, PDF)}
    # The two settled keyed changes (export format r1→r2, "do not refactor" → "refactoring allowed") are
    # decided already: their old revision is superseded, so nothing is proposed about them.
    assert not Dispute.objects.filter(older__status="superseded").exists()

    # A fact about where the decks live, changed later: one dispute for that pair, none with the rule
    # about the decks' format (it shares one word in five with it).
    slides = Scope.objects.get(path="demo/slides")
    for text in ("We host the decks on Dropbox.", "We have moved the decks to SharePoint."):
        memory_record(
            item=MemoryInput(scope=slides, kind="semantic", source_kind="user", text=text, status="active"),
            actor=None,
        )
    _embed_deliveries()
    assert _pairs() == {
        (PPTX, PDF),
        ("We have moved the decks to SharePoint.", "We host the decks on Dropbox."),
    }
    # Tool turns of the demo (no role in meta: a call id, or a tool_result source) were never compared.
    tools = Memory.objects.filter(scope=slides).exclude(call_id="")
    assert tools.count() == 4 and not Dispute.objects.filter(newer__in=tools).exists()


@pytest.mark.parametrize(
    ("older", "newer", "disputed"),
    [
        # The older one names its value, the newer one says it is no longer that: no shared subject word
        # is needed ("slides" vs "deck").
        (PDF, PPTX, True),
        ("Our builds run on Jenkins.", "We use GitLab CI from now on, not Jenkins.", True),
        # A value that starts like a day or a month is not a date: "MongoDB" is replaced by a name.
        ("Our main database runs on MongoDB.", "The team has moved the main database to PostgreSQL.", True),
        ("The slides are reviewed by Marketing.", "We have moved the slide review to Legal.", True),
        ("Team chat is quiet on Fridays.", "We moved team chat over to Discord.", False),
        # The older statement is about something else that mentions the decks on the way.
        (
            "Export the Q3 review deck as PPTX (the client edits it in PowerPoint).",
            "We have moved the decks to SharePoint.",
            False,
        ),
        ("We host the decks on Dropbox.", "We have moved the decks to SharePoint.", True),
        ("Production is hosted on AWS.", "Production has migrated to Azure.", True),
        ("生产环境部署在AWS上。", "生产环境已经迁移到Azure了。", True),
        ("我们的主数据库用的是MySQL。", "主数据库上周换成Oracle了。", True),
    ],
)
def test_the_rule_reads_what_the_newer_replaces(older, newer, disputed):
    assert (unkeyed_contradiction(older, newer, facts=False) is not None) is disputed
