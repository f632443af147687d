"""Every memory a turn left out is named under the stage that dropped it ("key rN (scope)" or a short excerpt,
a link to the memory and a "why not" for the turn), on a stored turn's page and in "Try a query" alike;
never the words or label of a memory outside the reader's grants, nor of one forgotten since. The stored
trace keeps at most DROP_IDS_CAP ids per reason."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from governance.models import Memory, Role, Turn
from governance.propagation import embed_memories
from governance.recall import assemble_context
from governance.recall.state import DROP_IDS_CAP
from governance.services.memory import memory_forget
from governance.services.principal import grant_add, user_ensure
from memoryui.forms.turns import BAD_MEMORY, BAD_MODE
from memoryui.views.trace import SHOWN, flat
from tests.memoryui.conftest import remember, signed_in

QUERY = "how do we export the slides deck as PPTX? 幻灯片文稿怎么导出？"
MANY = 45  # of each language


def _note(i: int) -> str:
    return f"Export note {i}: send the slides deck as PPTX for the review, tag alpha{i:03d}"


def _zh(i: int) -> str:
    return f"导出说明{i}：幻灯片文稿按PPTX导出给评审，标签乙{i:03d}"


@pytest.fixture
def big_scope(project_scope, history):
    """Memories in English and Chinese that match the query by words and by meaning, embedded: more than
    a keyword list (50) and the fused pool (50) hold, so the fuse stage cuts some and pack places few."""
    for i in range(MANY):
        remember(project_scope, _note(i), kind="episodic")
        remember(project_scope, _zh(i), kind="episodic")
    embed_memories(list(Memory.objects.values_list("pk", flat=True)))
    return project_scope


@pytest.fixture
def big_turn(big_scope):
    result = assemble_context(principal=None, scope=big_scope, query=QUERY, budget_tokens=300)
    return Turn.objects.get(pk=result["turn_id"])


@pytest.fixture
def viewer_client(project_scope):
    viewer = user_ensure(username="vera", password="pw-vera", actor=None)
    grant_add(principal=viewer, scope=project_scope, role=Role.VIEWER, actor=None)
    return signed_in(viewer, "pw-vera")


def _page(client, turn):
    return client.get(reverse("dashboard:turn", args=[turn.pk]))


def _counted(funnel_rows) -> dict[tuple[str, str], dict]:
    return {(name, c["key"]): c for name, m in flat(funnel_rows).items() for c in m.get("counted", [])}


def test_a_real_turn_names_every_memory_each_stage_dropped(reviewer_client, big_turn):
    counts = big_turn.trace["counts"]
    cut = counts["fuse"]["ids"]["cut"]
    assert counts["fuse"]["cut"] == len(cut) > 0, counts["fuse"]
    assert counts["pack"]["ids"]["not_placed"] and counts["pack"]["not_placed"] == len(
        counts["pack"]["ids"]["not_placed"]
    )
    assert all(len(ids) <= DROP_IDS_CAP for c in counts.values() for ids in (c.get("ids") or {}).values())
    assert len(json.dumps(big_turn.trace)) < 16_000  # bounded: ids, never texts

    response = _page(reviewer_client, big_turn)
    body = response.content.decode()
    assert "without naming each one" not in body
    rows = flat(response.context["funnel"])
    for name in ("fuse", "rank", "pack"):  # every stage's drops add up: in + added − out
        m = rows[name]
        assert m["in"] + m["added"] - m["out"] == m["n_dropped"], m
    counted = _counted(response.context["funnel"])
    for (_stage, key), c in counted.items():
        assert c["unnamed"] == 0 and c["hidden"] == 0, c  # every one named, all readable here
        assert [label.id for label in c["named"] + c["more"]] == c["ids"]
        if key != "found_twice":
            assert c["n"] == len(c["ids"]), c
    fuse_cut = counted[("fuse", "cut")]
    assert len(fuse_cut["named"]) == min(len(cut), SHOWN)
    # Each named with a link to its page and a why-not for this turn; past SHOWN, behind "and N more".
    why = reverse("dashboard:turn-why-not", args=[big_turn.pk])
    for memory_id in cut + counts["pack"]["ids"]["not_placed"]:
        assert f'data-dropped="{memory_id}"' in body
        assert f'href="{reverse("dashboard:memory", args=[memory_id])}"' in body
        assert f"{why}?memory={memory_id}" in body
    if len(counts["pack"]["ids"]["not_placed"]) > SHOWN:
        assert f"and {len(counts['pack']['ids']['not_placed']) - SHOWN} more" in body
    # Labels are short excerpts with the scope, in either language.
    excerpts = {label.excerpt for c in counted.values() for label in c["named"] + c["more"]}
    assert any("PPTX for the review" in e for e in excerpts) and any("幻灯片" in e for e in excerpts)
    assert (
        'class="mlabel-scope" title="acme/slides"' in body
    )  # each label names its scope (memoryui/labels.py)
    # Each stage says in plain words what it does.
    assert all(rows[n]["words"] for n in ("eligible", "lexical", "vector", "fuse", "rank", "pack"))


def test_every_reader_of_the_turn_sees_the_drops_and_no_one_else(
    owner_client, curator_client, reviewer_client, viewer_client, outsider_client, client, big_turn
):
    one = big_turn.trace["counts"]["fuse"]["ids"]["cut"][0]
    for reader in (owner_client, curator_client, reviewer_client, viewer_client):
        response = _page(reader, big_turn)
        assert response.status_code == 200 and f'data-dropped="{one}"' in response.content.decode()
    assert _page(outsider_client, big_turn).status_code == 404
    assert _page(client, big_turn).status_code == 302  # sign in first


def test_a_forgotten_memory_among_the_drops_shows_no_words(reviewer_client, big_turn):
    counts = big_turn.trace["counts"]
    dropped = counts["fuse"]["ids"]["cut"] + counts["pack"]["ids"]["not_placed"]
    texts = dict(Memory.objects.filter(pk__in=dropped).values_list("pk", "text"))
    english = next(i for i in dropped if texts[i].startswith("Export note"))
    chinese = next(i for i in dropped if texts[i].startswith("导出说明"))
    for memory_id in (english, chinese):
        memory_forget(memory_id=memory_id, actor=None, reason="asked to")
    body = _page(reviewer_client, big_turn).content.decode()
    for memory_id in (english, chinese):
        tag = re.search(r"(alpha|乙)\d{3}", texts[memory_id]).group(0)
        assert tag not in body, tag
        item = re.search(rf'<li data-dropped="{memory_id}">(.*?)</li>', body, re.S).group(1)
        assert "a forgotten memory" in item and "PPTX" not in item and "幻灯片" not in item


def _hand_made_turn(scope, ids: dict, packet: dict | None = None, **counts) -> Turn:
    return Turn.objects.create(
        scope=scope,
        query="what format?",
        packet=packet or {},
        trace={
            "stages": [{"name": "fuse", "ms": 1, "in": 10 + sum(counts.values()), "out": 10}],
            "counts": {"fuse": {**counts, **({"ids": ids} if ids else {})}},
        },
    )


def test_drops_outside_the_readers_grants_are_counted_never_named(
    reviewer_client, owner_client, project_scope, history, other_workspace_scope
):
    elsewhere = remember(other_workspace_scope, "Another company's launch date is secret")
    skipped = {
        "memory_id": history["secret"].pk,
        "text": history["secret"].text,
        "status": "active",
        "slot": "evidence",
        "reason": "cold and its match is weak",
        "stage": "rank",
    }
    turn = _hand_made_turn(
        project_scope,
        {"cut": [history["episode"].pk, history["secret"].pk, elsewhere.pk, 999_999]},
        packet={"skipped": [skipped]},
        cut=4,
    )
    body = _page(reviewer_client, turn).content.decode()
    assert f'data-dropped="{history["episode"].pk}"' in body and "make the deck shorter" in body
    for unseen in (history["secret"].pk, elsewhere.pk, 999_999):
        assert f'data-dropped="{unseen}"' not in body and f"memory={unseen}" not in body
    assert "Payments API key" not in body and "launch date" not in body
    assert 'data-hidden="3"' in body
    assert "1 skipped memory is outside what you may read" in body  # the Skipped card: counted only
    # The owner of the workspace may read the sibling's memory: named for them.
    owner_body = _page(owner_client, turn).content.decode()
    assert f'data-dropped="{history["secret"].pk}"' in owner_body and 'data-hidden="2"' in owner_body


def test_a_turn_stored_before_stages_named_their_drops_says_so(reviewer_client, project_scope, history):
    turn = _hand_made_turn(project_scope, {}, cut=3)
    body = _page(reviewer_client, turn).content.decode()
    assert 'data-unnamed="3"' in body and "stored before its stages named what they dropped" in body


# --- Try a query ----------------------------------------------------------------------------------------


def _try(client, url="dashboard:turn-try", **fields):
    data = {"query": QUERY, "try_scope": "acme/slides", "strategy": "full", "budget": "300"}
    return client.post(reverse(url), {**data, **fields}, HTTP_HX_REQUEST="true")


def test_try_a_query_names_the_drops_and_answers_why_not_for_its_packet(reviewer_client, big_scope):
    turns = Turn.objects.count()
    response = _try(reviewer_client)
    assert response.status_code == 200, response.content
    body = response.content.decode()
    cut = _counted(response.context["funnel"])[("fuse", "cut")]
    assert cut["named"] and cut["unnamed"] == 0
    first = cut["named"][0].id
    assert f'data-dropped="{first}"' in body and f'form="try-why-not" name="memory" value="{first}"' in body
    assert 'id="try-why-not"' in body and 'name="query"' in body

    answer = _try(reviewer_client, "dashboard:turn-try-why-not", memory=str(first)).context["answer"]
    assert (answer.verdict, answer.stage, answer.source) == ("cut by fusion", "fuse", "replay"), answer
    packet = assemble_context(principal=None, scope=big_scope, query=QUERY, budget_tokens=300, store=False)[
        "packet"
    ]
    used = packet["evidence"][0]["memory_id"]
    answered = _try(reviewer_client, "dashboard:turn-try-why-not", memory=f"#{used}")
    assert answered.context["answer"].verdict == "used" and answered.context["answer"].source == "stored"
    assert "From the packet just assembled for this query" in answered.content.decode()
    # The picker, by words in either language: buttons that ask for this query's packet.
    for words in ("alpha007", "标签乙007"):
        picked = _try(reviewer_client, "dashboard:turn-try-why-not", memory_q=words)
        [choice] = picked.context["choices"]
        assert f'name="memory" value="{choice.pk}"' in picked.content.decode()
    assert Turn.objects.count() == turns  # nothing stored


def test_try_why_not_asks_the_same_rights_and_reads_its_input_through_its_form(
    reviewer_client, viewer_client, outsider_client, client, project_scope, history
):
    url = "dashboard:turn-try-why-not"
    mine = str(history["second"].pk)
    assert _try(viewer_client, url, memory=mine).status_code == 403  # no right to ask for context
    assert _try(outsider_client, url, memory=mine).status_code == 404  # the scope is not theirs
    assert _try(client, url, memory=mine).status_code == 302
    assert _try(reviewer_client, url, memory=str(history["secret"].pk)).status_code == 404  # a sibling's
    assert reviewer_client.get(reverse(url)).status_code == 405
    for not_a_memory in ("forty", "0", "9" * 30):  # nor a number that cannot be a bigint id
        bad = _try(reviewer_client, url, memory=not_a_memory)
        assert bad.status_code == 400 and BAD_MEMORY.encode() in bad.content
    bad = _try(reviewer_client, url, memory_q="x", mode="vibes")
    assert bad.status_code == 400 and BAD_MODE.encode() in bad.content


def test_the_labels_of_every_drop_are_read_in_a_fixed_number_of_queries(
    reviewer, big_scope, history, django_assert_max_num_queries
):
    from governance.selectors.dashboard import drop_labels

    ids = list(Memory.objects.values_list("pk", flat=True)) + [999_999]
    with django_assert_max_num_queries(2):  # the reader's grants, then the labels
        labels = drop_labels(reviewer, ids)
    assert history["secret"].pk not in labels and 999_999 not in labels  # a sibling's, and none at all
    second = labels[history["second"].pk]
    assert (second.key, second.revision, second.scope) == ("export_format", 2, "acme/slides")


def test_a_stage_records_at_most_the_cap_of_ids_per_reason_and_the_page_says_how_many_more(
    reviewer_client, project_scope, history
):
    from django.utils import timezone

    from governance.recall.state import RecallState

    state = RecallState(principal=None, scope=project_scope, query="q", stages=frozenset(), at=timezone.now())
    many = list(range(1, 251))
    state.run("fuse", lambda s: (300, 50, {"cut": len(many), "ids": {"cut": many, "collapsed": []}}))
    assert state.counts["fuse"]["ids"] == {"cut": many[:DROP_IDS_CAP]} and state.counts["fuse"]["cut"] == 250
    # A turn whose recorded ids stop at the cap: the first ones named (those the reader may read), the rest counted.
    readable = [history["episode"].pk, history["second"].pk]
    turn = _hand_made_turn(project_scope, {"cut": readable}, cut=250)
    body = _page(reviewer_client, turn).content.decode()
    assert 'data-unnamed="248"' in body and "The turn named the first 2; 248 more are only counted." in body
