"""One dispute per pair, whichever side is the newer (governance/models/relation.py, dispute_unique_pair).

A fresh-clone run showed the same pair twice on the review page: the browser test proposed it, and the
live worker, embedding the two memories at the same moment, proposed it the other way round."""

import pytest
from django.db import IntegrityError, transaction

from governance.models import Dispute
from governance.services.dispute import dispute_propose
from governance.services.memory import MemoryInput, memory_record

pytestmark = pytest.mark.django_db


def _pair(scope):
    return [
        memory_record(
            item=MemoryInput(scope=scope, kind="semantic", source_kind="user", text=text, status="active"),
            actor=None,
        )
        for text in ("We host the decks on Dropbox.", "We have moved the decks to SharePoint.")
    ]


def test_the_same_pair_the_other_way_round_is_not_proposed_again(project_scope):
    older, newer = _pair(project_scope)
    first = dispute_propose(newer=newer, older=older, similarity=0.84, reason="another value", cues=["moved"])
    assert first is not None
    again = dispute_propose(newer=older, older=newer, similarity=0.84, reason="another value", cues=["moved"])
    assert again is None
    assert Dispute.objects.count() == 1


def test_the_database_refuses_a_second_row_for_a_pair_either_way(project_scope):
    older, newer = _pair(project_scope)
    Dispute.objects.create(newer=newer, older=older, similarity=0.8, reason="r", cues=[])
    with pytest.raises(IntegrityError), transaction.atomic():
        Dispute.objects.create(newer=older, older=newer, similarity=0.8, reason="r", cues=[])
