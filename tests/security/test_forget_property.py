"""A property of forgetting (issue 50), drawn by Hypothesis: agents relay random user turns (English and
Chinese, a few sentences each, some rule-like so the extractor reads candidates from them) in random
scopes of one workspace, ask for context, and an owner forgets random memories — extracted candidates or
whole turns, soft or hard. Afterwards no read path — packet (with its hand-off), recall, the memory list
and each memory, each stored turn, the summary, the export, the dashboard's memory, turn and list pages —
returns a forgotten sentence to any role; after a hard forget and the workers' propagation (run here in
process, the same handlers), no column of PostgreSQL and no key or value of any Redis database holds it.

A sentence counts as forgotten when every memory holding it is forgotten: a candidate a person confirmed
stays in force when the turn it was read from is forgotten (services/memory/words.py)."""

from __future__ import annotations

import pytest
import redis
from django.db import transaction
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from governance import propagation
from governance.models import Memory, Outbox, Role, Status
from governance.propagation.tasks import embed_outbox, propagate_outbox
from governance.services.memory import memory_confirm, memory_forget
from governance.services.principal import grant_add, principal_ensure, user_ensure
from governance.services.scope import scope_ensure
from tests.conftest import token_client
from tests.governance.propagation.helpers import postgres_hits, redis_hits, unique_marker

SCOPES = ("acme/slides", "acme/payments", "acme/slides/deck")
RULES = (
    "Always use the badge PIN {m} for the east entrance.",
    "From now on, always name the files {m}.",
    "Never share the code {m} with the client.",
    "以后东门一律刷门禁密码{m}。",
    "以后文件名一律用{m}。",
    "不要把代码{m}发给客户。",
)
OTHERS = (
    "Thanks for the draft, the note is {m}.",
    "The deck looks fine otherwise, see {m}.",
    "谢谢你的初稿，编号{m}。",
    "其他部分看起来不错，参考{m}。",
)
QUESTIONS = ("Which badge PIN for the east entrance?", "What do we name the files?", "东门的门禁密码是多少？")

sentence = st.one_of(
    st.sampled_from(RULES).map(lambda t: ("rule", t)), st.sampled_from(OTHERS).map(lambda t: ("other", t))
)
turn = st.tuples(st.sampled_from(SCOPES), st.lists(sentence, min_size=1, max_size=3))


@pytest.fixture
def cast(workspace_scope, owner):
    scopes = {path: scope_ensure(path=path, actor=None) for path in SCOPES}
    agents = {}
    for path, scope in scopes.items():
        agents[path] = principal_ensure(name=f"agent-{path.replace('/', '-')}", kind="agent", actor=None)
        grant_add(principal=agents[path], scope=scope, role=Role.AGENT, actor=None)
    reviewer = user_ensure(username="prop-reviewer", password="pw-prop", actor=None)
    grant_add(principal=reviewer, scope=workspace_scope, role=Role.REVIEWER, actor=None)
    return scopes, agents, reviewer


def _propagate() -> None:
    """The workers' handlers, in process, until no outbox row is pending."""
    for _ in range(5):
        pending = list(Outbox.objects.exclude(state=Outbox.State.DONE).values_list("pk", flat=True))
        if not pending:
            return
        for pk in pending:
            propagate_outbox.run(pk)
            embed_outbox.run(pk)


def _redis_hits(marker: str) -> list[str]:
    base = propagation.redis_client()
    kwargs = dict(base.connection_pool.connection_kwargs)
    count = int(base.config_get("databases").get("databases", 16))
    hits = []
    for db in range(count):
        kwargs["db"] = db
        pool = redis.ConnectionPool(connection_class=base.connection_pool.connection_class, **kwargs)
        hits += [f"db{db}:{key}" for key in redis_hits(redis.Redis(connection_pool=pool), marker)]
        pool.disconnect()
    return hits


def _api_reads(client, scopes: list[str], memory_ids: list[int], turn_ids: list[int]) -> str:
    """Every API read of these scopes, memories and turns, as this client: each must answer (a memory or
    turn outside the caller's grants is a 404 like an unknown one), so a read that was refused cannot
    pass for one that hid the text."""
    answers = []
    for path in scopes:
        answers.append(
            client.post(
                "/api/v1/context",
                {"scope": path, "query": QUESTIONS[0], "include": ["handoff"]},
                format="json",
            )
        )
        answers.append(client.post("/api/v1/recall", {"scope": path, "query": QUESTIONS[2]}, format="json"))
        answers.append(client.get("/api/v1/memories", {"scope": path}))
        answers += [client.get("/api/v1/memories", {"scope": path, "status": s}) for s in Status.values]
        answers.append(client.get("/api/v1/summary", {"scope": path}))
    assert [a.status_code for a in answers] == [200] * len(answers), [a.content[:200] for a in answers]
    by_id = [client.get(f"/api/v1/memories/{pk}") for pk in memory_ids]
    by_id += [client.get(f"/api/v1/turns/{pk}") for pk in turn_ids]
    assert {a.status_code for a in by_id} <= {200, 404}
    return b"\n".join(a.content for a in [*answers, *by_id]).decode()


def _around(shown: str, marker: str) -> str:
    at = shown.index(marker)
    return shown[max(0, at - 400) : at + 60]


def _pages(username: str, password: str, memory_ids: list[int], turn_ids: list[int]) -> str:
    client = Client()
    assert client.login(username=username, password=password)
    pages = [client.get(reverse("dashboard:memories"), {"scope": "acme"})]
    pages += [client.get(reverse("dashboard:memory", args=[pk])) for pk in memory_ids]
    pages += [client.get(reverse("dashboard:turn", args=[pk])) for pk in turn_ids]
    assert [p.status_code for p in pages] == [200] * len(pages)  # both readers hold a workspace grant
    return b"\n".join(p.content for p in pages).decode()


@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    turns=st.lists(turn, min_size=1, max_size=3),
    queries=st.lists(st.integers(0, len(QUESTIONS)), min_size=3, max_size=3),
    confirm=st.one_of(st.none(), st.integers(0, 20)),
    forgets=st.lists(st.tuples(st.integers(0, 20), st.booleans()), min_size=1, max_size=3),
)
def test_no_read_path_returns_a_forgotten_sentence(
    cast, owner, workspace_scope, turns, queries, confirm, forgets
):
    """Each example in a savepoint rolled back after it: examples never see each other's rows."""
    with transaction.atomic():
        _example(cast, owner, workspace_scope, turns, queries, confirm, forgets)
        transaction.set_rollback(True)


def _example(cast, owner, workspace_scope, turns, queries, confirm, forgets):
    # Every draw is made up front: what the database holds never shapes the example (Hypothesis replays it).
    scopes, agents, reviewer = cast
    said: dict[str, str] = {}  # marker -> the sentence holding it
    turn_ids = []
    run = unique_marker()  # sessions of their own: a replayed example's turns are new turns
    first = (Memory.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1
    for i, (path, sentences) in enumerate(turns):
        texts = []
        for _, template in sentences:
            marker = unique_marker()
            said[marker] = template.format(m=marker)
            texts.append(said[marker])
        client = token_client(agents[path])
        answer = client.post(
            "/api/v1/events",
            {
                "scope": path,
                "session": f"s{i}",
                "turns": [{"role": "user", "content": " ".join(texts), "ref": f"t{i}"}],
            },
            format="json",
        )
        assert answer.status_code == 201, answer.content
        # A stored packet quoting the turn (its session's recent slot), sometimes asked with its words.
        query = [*QUESTIONS, texts[0]][queries[i]]
        asked = client.post(
            "/api/v1/context", {"scope": path, "query": query, "session": f"{run}-{i}"}, format="json"
        )
        turn_ids.append(asked.json()["turn_id"])

    markers = list(said)
    rows = list(
        Memory.objects.filter(
            scope__workspace=workspace_scope.workspace,
            status__in=[Status.CANDIDATE, Status.PROPOSED, Status.ACTIVE],
        ).order_by("pk")
    )
    rows = [m for m in rows if any(marker in m.text for marker in markers)]
    if rows and confirm is not None:
        chosen = rows[confirm % len(rows)]
        if chosen.kind != "episodic" and chosen.status != Status.ACTIVE:
            memory_confirm(memory_id=chosen.pk, actor=owner, reason="the user said so")
    texts_of = {m.pk: m.text for m in rows}
    forgets = [(rows[i % len(rows)], hard) for i, hard in forgets] if rows else []
    hard_markers = set()
    for memory, hard in forgets:
        memory_forget(memory_id=memory.pk, actor=owner, reason="the user asked", hard=hard)
        if hard:
            hard_markers |= {marker for marker in markers if marker in texts_of[memory.pk]}
    _propagate()

    in_force = " ".join(Memory.objects.exclude(status=Status.FORGOTTEN).values_list("text", flat=True))
    forgotten = {
        marker
        for marker in markers
        if marker not in in_force and any(marker in texts_of[m.pk] for m, _ in forgets)
    }
    hard_markers &= forgotten
    if not forgotten:
        return
    mine = Memory.objects.filter(pk__gte=first)
    memory_ids = sorted(mine.values_list("pk", flat=True))
    # An owner's explicit look at a soft-forgotten memory's own tombstone on the dashboard shows its text
    # (docs/governance.md, "Forgetting"); every other page, and every API read, shows it to no one.
    tombstones = set(mine.filter(status=Status.FORGOTTEN, purged_at=None).values_list("pk", flat=True))
    shown = "\n".join(
        [
            *(_api_reads(token_client(agents[path]), [path], memory_ids, turn_ids) for path in SCOPES),
            _api_reads(token_client(reviewer), list(SCOPES), memory_ids, turn_ids),
            _api_reads(token_client(owner), list(SCOPES), memory_ids, turn_ids),
            b"".join(
                token_client(owner).get(f"/api/v1/scopes/{workspace_scope.pk}/export").streaming_content
            ).decode(),
            _pages("prop-reviewer", "pw-prop", memory_ids, turn_ids),
            _pages(owner.name, "pw-olivia", [pk for pk in memory_ids if pk not in tombstones], turn_ids),
        ]
    )
    leaked = [(said[marker], _around(shown, marker)) for marker in forgotten if marker in shown]
    assert not leaked, leaked
    for marker in hard_markers:
        assert postgres_hits(marker) == [], said[marker]
        assert _redis_hits(marker) == [], said[marker]
