"""The load of `manage.py bench_load`: locust users against the team topology (devtools/topology.py).

Run by bench_load as `locust -f devtools/benchmarks/locustfile.py --headless ...` with BENCH_CONFIG (tokens,
scopes, the dashboard sign-in; written by bench_load's setup) and BENCH_RECORD (where this process writes,
at the end, what the server accepted, so bench_load can check the data). Nothing here talks to the
database: the checks run afterwards, in bench_load, against what was recorded client-side.

Two teams, each an agent principal with a grant on its own scope (acme/team-a, acme/team-b) only, and
an owner of the workspace who confirms, forgets and reads the dashboard. Every packet and recall answer
is recorded with the ids it held, so bench_load can check no team saw the other's memories, and each is
checked at once against the texts whose hard forget was already accepted.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import threading
import time
import uuid

from locust import HttpUser, between, events, task

CONFIG = json.loads(open(os.environ["BENCH_CONFIG"]).read())  # noqa: SIM115
RUN = CONFIG["run"]
WORDS = (
    "deck export format pdf pptx slides chart budget review deadline release build deploy toolchain "
    "customer invoice meeting summary draft render theme font color logo quarterly report"
).split()

_lock = threading.Lock()
_users = itertools.count()
RECORD = {
    "writes": {"accepted": [], "ambiguous": [], "rejected": []},  # [id, text] / [text]
    "events": {"accepted": [], "ambiguous": [], "rejected": []},  # [[ids], user text]
    "confirmed": [],  # [id, key]
    "forgotten": [],  # [id, text, accepted_at]
    "reads": [],  # [team, kind, [memory ids]]
    "leaks": [],  # [team, kind, reason]
    "failures": [],  # [time, name, status or exception]
    "served_by": {},  # {"context primary": n, "recall replica": n, …}: which database server answered
}
_forgotten_texts: list[tuple[float, str]] = []


def _ids(value) -> set[int]:
    """Every memory_id anywhere in a packet or recall answer."""
    found: set[int] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "memory_id" and isinstance(item, int):
                found.add(item)
            else:
                found |= _ids(item)
    elif isinstance(value, list):
        for item in value:
            found |= _ids(item)
    return found


def _sentence(n: int = 8) -> str:
    return " ".join(random.choice(WORDS) for _ in range(n))


class TeamUser(HttpUser):
    """An agent working in its team's scope, and (for governance and the dashboard) the workspace owner."""

    wait_time = between(0.05, 0.5)

    def on_start(self) -> None:
        number = next(_users)
        self.team = "ab"[number % 2]
        team = CONFIG["teams"][self.team]
        self.scope = team["scope"]
        self.agent = {
            "Authorization": f"Token {team['agent_tokens'][number // 2 % len(team['agent_tokens'])]}"
        }
        self.owner = {
            "Authorization": f"Token {CONFIG['owner_tokens'][number % len(CONFIG['owner_tokens'])]}"
        }
        self.mine: list[tuple[int, str]] = []  # episodes this user wrote and may forget
        # Three keyed rules per user, revised again and again (a confirm supersedes the key's active
        # revision): the constraints in force stay bounded, as in real use, and fit the packet's budget.
        self.keys = itertools.cycle([f"bench_{RUN}_{number}_{k}" for k in range(3)])
        self.signed_in = False

    # --- helpers ------------------------------------------------------------------------------------
    def _post(self, path: str, body: dict, headers: dict, name: str, ok: int, *, write: bool = False):
        """One request, never retried here. A write carries a fresh Idempotency-Key, as a careful client
        sends: the server may then run it again itself after a dropped database connection (its answer is
        replayed if the first run committed), so the client needs no retry of its own for that."""
        started = time.time()
        if write:
            headers = {**headers, "Idempotency-Key": str(uuid.uuid4())}
        with self.client.post(
            path, json=body, headers=headers, name=name, timeout=30, catch_response=True
        ) as resp:
            if resp.status_code == ok:
                resp.success()
            else:
                resp.failure(f"{resp.status_code}")
                with _lock:
                    RECORD["failures"].append([started, name, resp.status_code or str(resp.error)[:80]])
            return resp, started

    def _outcome(self, resp) -> str:
        """accepted (committed), rejected (a 4xx: nothing changed) or ambiguous (5xx, no answer)."""
        if resp.status_code in (200, 201, 202):
            return "accepted"
        if 400 <= (resp.status_code or 0) < 500:
            return "rejected"
        return "ambiguous"

    def _check_read(self, kind: str, resp, started: float) -> None:
        if resp.status_code != 200:
            return
        body = resp.text
        leaks = [text for at, text in list(_forgotten_texts) if at < started and text in body]
        served = f"{kind} {resp.json().get('served_by', 'primary')}"
        with _lock:
            RECORD["served_by"][served] = RECORD["served_by"].get(served, 0) + 1
            RECORD["reads"].append([self.team, kind, sorted(_ids(resp.json()))])
            for text in leaks:
                RECORD["leaks"].append([self.team, kind, f"forgotten text returned: {text[:40]}"])

    def _query(self) -> str:
        """A third of the questions ask for a text whose hard forget was accepted (it must not come back),
        a third for one of this user's own memories, the rest are loose words."""
        roll = random.random()
        if roll < 0.33 and _forgotten_texts:
            text = random.choice(_forgotten_texts[-20:])[1]
        elif roll < 0.66 and self.mine:
            text = random.choice(self.mine[-20:])[1]
        else:
            return _sentence(5)
        # All but the last word: close enough to find the memory, and never the whole text, so a stored
        # turn's query is not itself a copy of a forgotten text (the check looks for whole texts).
        return text.rsplit(" ", 1)[0]

    # --- the mix ----------------------------------------------------------------------------------------
    @task(5)
    def ask_context(self) -> None:
        resp, started = self._post(
            "/api/v1/context",
            {
                "scope": self.scope,
                "session": f"bench-{RUN}",
                "query": self._query(),
                "budget_tokens": 600,
                "task": {"goal": _sentence(4), "type": "continue"},
            },
            self.agent,
            "context",
            200,
        )
        self._check_read("context", resp, started)

    @task(2)
    def ask_recall(self) -> None:
        resp, started = self._post(
            "/api/v1/recall", {"scope": self.scope, "query": self._query(), "k": 5}, self.agent, "recall", 200
        )
        self._check_read("recall", resp, started)

    @task(3)
    def write_memory(self) -> None:
        turn = uuid.uuid4().hex[:12]
        text = f"Bench {RUN} {turn}: {_sentence(10)}"
        # One turn per write: an episode's source ref names its turn, and a second episode of one turn is
        # refused (409 turn_already_stored).
        source = {"kind": "user", "ref": f"{RUN}-{turn}"}
        resp, _ = self._post(
            "/api/v1/memories",
            {"scope": self.scope, "kind": "episodic", "text": text, "source": source},
            self.agent,
            "write",
            201,
            write=True,
        )
        outcome = self._outcome(resp)
        with _lock:
            if outcome == "accepted":
                memory_id = resp.json()["id"]
                RECORD["writes"]["accepted"].append([memory_id, text])
                self.mine.append((memory_id, text))
            else:
                RECORD["writes"][outcome].append([text])

    @task(1)
    def send_event(self) -> None:
        said = f"Bench event {RUN} {uuid.uuid4().hex[:12]}: {_sentence(8)}"
        resp, _ = self._post(
            "/api/v1/events",
            {
                "scope": self.scope,
                "session": f"bench-{RUN}-{self.team}",
                "turns": [
                    {"role": "user", "content": said},
                    {"role": "assistant", "content": f"Noted: {_sentence(6)}"},
                ],
            },
            self.agent,
            "events",
            201,
            write=True,
        )
        outcome = self._outcome(resp)
        with _lock:
            if outcome == "accepted":
                RECORD["events"]["accepted"].append([[m["id"] for m in resp.json()["created"]], said])
            else:
                RECORD["events"][outcome].append([[], said])

    @task(1)
    def propose_and_confirm(self) -> None:
        # An agent's keyed convention is only proposed; the owner puts it in force.
        resp, _ = self._post(
            "/api/v1/memories",
            {
                "scope": self.scope,
                "kind": "convention",
                "key": next(self.keys),
                "text": f"Bench {RUN} rule {uuid.uuid4().hex[:8]}: {_sentence(6)}",
                "source": {"kind": "user", "ref": RUN},
            },
            self.agent,
            "propose",
            201,
            write=True,
        )
        if resp.status_code != 201:
            return
        memory_id, key = resp.json()["id"], resp.json()["key"]
        with _lock:
            RECORD["writes"]["accepted"].append([memory_id, resp.json()["text"]])
        confirm, _ = self._post(
            f"/api/v1/memories/{memory_id}/confirm",
            {"reason": "bench"},
            self.owner,
            "confirm",
            200,
            write=True,
        )
        if confirm.status_code == 200:
            with _lock:
                RECORD["confirmed"].append([memory_id, key])

    @task(1)
    def hard_forget(self) -> None:
        if len(self.mine) < 3:
            return
        memory_id, text = self.mine.pop(random.randrange(len(self.mine)))
        resp, _ = self._post(
            f"/api/v1/memories/{memory_id}/forget",
            {"mode": "hard", "reason": "bench"},
            self.owner,
            "forget",
            202,
            write=True,
        )
        if resp.status_code == 202:
            accepted_at = time.time()
            with _lock:
                RECORD["forgotten"].append([memory_id, text, accepted_at])
                _forgotten_texts.append((accepted_at, text))

    @task(1)
    def open_dashboard(self) -> None:
        if not self.signed_in:
            self._sign_in()
            if not self.signed_in:
                return
        page = random.choice(
            [
                ("/", "dashboard overview"),
                (f"/memories/?scope={CONFIG['workspace']}", "dashboard memories"),
                ("/review/", "dashboard review"),
                ("/turns/", "dashboard turns"),
            ]
        )
        with self.client.get(page[0], name=page[1], timeout=30, catch_response=True) as resp:
            if resp.status_code == 200 and "/accounts/login/" not in resp.url:
                resp.success()
            else:
                resp.failure(f"{resp.status_code}")
                with _lock:
                    RECORD["failures"].append([time.time(), page[1], resp.status_code])
                self.signed_in = False

    def _sign_in(self) -> None:
        self.client.get("/accounts/login/", name="dashboard sign-in form")
        token = self.client.cookies.get("csrftoken", "")
        started = time.time()
        with self.client.post(
            "/accounts/login/",
            name="dashboard sign-in",
            data={
                "username": CONFIG["dashboard_user"],
                "password": CONFIG["dashboard_password"],
                "csrfmiddlewaretoken": token,
            },
            headers={"Referer": f"{self.host}/accounts/login/"},
            allow_redirects=False,
            catch_response=True,
        ) as resp:
            self.signed_in = resp.status_code == 302
            if self.signed_in:
                resp.success()
            else:  # recorded like every other failure, so bench_load says when and how it failed
                resp.failure(f"{resp.status_code}")
                with _lock:
                    RECORD["failures"].append(
                        [started, "dashboard sign-in", resp.status_code or str(resp.error)[:80]]
                    )


@events.quitting.add_listener
def _write_record(environment, **_kwargs) -> None:
    with _lock, open(os.environ["BENCH_RECORD"], "w") as f:
        json.dump(RECORD, f)
