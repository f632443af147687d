"""The evaluation page's history, a run's drill-down, and evaluating an uploaded LoCoMo file: queued by
the request, run by a real Celery worker into a workspace of its own, stored as an EvaluationRun. Each
with the session of each role, another workspace's, a site administrator's, and none."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from governance.errors import NotFound, PermissionDenied
from governance.evaluation.runs import UPLOAD_NO_QUESTIONS, UPLOAD_NOT_JSON, evaluation_request
from governance.models import AuditEvent, EvaluationMiss, EvaluationRun, Memory, Workspace
from governance.selectors.dashboard.evaluation import evaluation_runs_page
from governance.services.principal import user_ensure
from memoryui.views.evaluation import FILE_REQUIRED
from tests.conftest import wait_for
from tests.governance.evaluation.test_benchmark_files import LOCOMO
from tests.memoryui.conftest import signed_in


def _file(data=None, name="mini-locomo.json") -> SimpleUploadedFile:
    body = data if isinstance(data, bytes) else json.dumps(LOCOMO if data is None else data).encode()
    return SimpleUploadedFile(name, body, content_type="application/json")


def _upload(client, data=None, workspace="acme", **extra):
    return client.post("/evaluation/upload/", {"file": _file(data), "workspace": workspace, **extra})


@pytest.fixture
def admin(db):
    principal = user_ensure(username="sam-admin", password="pw-sam", actor=None)
    get_user_model().objects.filter(username="sam-admin").update(is_superuser=True)
    principal.refresh_from_db()
    return principal


def test_only_owners_and_site_admins_may_start_an_evaluation(
    owner, reviewer, curator, outsider, admin, workspace_scope
):
    acme = Workspace.objects.get(slug="acme")
    content = json.dumps(LOCOMO).encode()
    for refused, error in ((reviewer, PermissionDenied), (curator, PermissionDenied), (outsider, NotFound)):
        with pytest.raises(error):
            evaluation_request(workspace=acme, name="f.json", content=content, fmt=None, actor=refused)
    assert not EvaluationRun.objects.exists()
    for allowed in (owner, admin):
        run = evaluation_request(workspace=acme, name="f.json", content=content, fmt=None, actor=allowed)
        assert (run.state, run.suite, run.task_count, run.upload_format) == (
            "queued",
            "retrieval:f.json",
            4,
            "locomo",
        )
    assert AuditEvent.objects.filter(action="evaluation.request", actor=owner).exists()


def test_the_upload_form_is_offered_only_to_whom_may_start(owner_client, reviewer_client, admin):
    assert b'id="evaluation-upload"' in owner_client.get("/evaluation/").content
    assert b'id="evaluation-upload"' not in reviewer_client.get("/evaluation/").content
    assert b'id="evaluation-upload"' in signed_in(admin, "pw-sam").get("/evaluation/").content


def test_bad_uploads_are_refused_with_a_reason_and_store_nothing(
    owner_client, reviewer_client, outsider_client, settings, workspace_scope
):
    settings.EVALUATION_UPLOAD_MAX_BYTES = 200
    too_big = _upload(owner_client)
    assert too_big.status_code == 413 and "at most 200 bytes" in too_big.content.decode()
    settings.EVALUATION_UPLOAD_MAX_BYTES = 1_000_000
    not_json = _upload(owner_client, b"this is not json")
    assert not_json.status_code == 400 and UPLOAD_NOT_JSON in not_json.content.decode()
    no_questions = _upload(
        owner_client,
        [
            {
                "sample_id": "x",
                "qa": [],
                "conversation": {
                    "speaker_a": "A",
                    "speaker_b": "B",
                    "session_1_date_time": "1:56 pm on 8 May, 2023",
                    "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}],
                },
            }
        ],
    )
    assert no_questions.status_code == 400 and UPLOAD_NO_QUESTIONS in no_questions.content.decode()
    broken = _upload(owner_client, [{"sample_id": "x"}])
    assert broken.status_code == 400 and "`conversation` must be an object" in broken.content.decode()
    missing = owner_client.post("/evaluation/upload/", {"workspace": "acme"})
    assert missing.status_code == 400 and FILE_REQUIRED in missing.content.decode()
    assert _upload(reviewer_client).status_code == 403
    assert _upload(outsider_client).status_code == 404  # acme is not the outsider's to know of
    assert _upload(owner_client, workspace="no-such-workspace").status_code == 404
    anonymous = _upload(Client())
    assert anonymous.status_code == 302 and "/login" in anonymous["Location"]
    assert not EvaluationRun.objects.exists()


def test_an_uploaded_locomo_file_is_evaluated_by_the_worker_into_its_own_workspace(
    celery_worker,
    owner,
    reviewer,
    outsider,
    project_scope,
):
    owner_client = signed_in(owner, "pw-olivia")
    before = Memory.objects.filter(scope__workspace__slug="acme").count()
    response = _upload(owner_client)
    run = EvaluationRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/evaluation/runs/{run.pk}/"
    run = wait_for(
        lambda: EvaluationRun.objects.filter(pk=run.pk, state__in=("done", "failed")).first(), timeout=180
    )
    assert run.state == "done", run.error
    assert (run.upload, run.sandbox, run.workspace.slug, run.started_by_id) == (
        "",
        f"eval-run-{run.pk}",
        "acme",
        owner.pk,
    )
    # Imported into the run's own workspace, nothing into the team's scopes; that workspace is thrown
    # away once measured (the drill-down keeps the texts it needs).
    assert Memory.objects.filter(scope__workspace__slug="acme").count() == before
    assert run.results["turns"] == 8 and not Workspace.objects.filter(slug=f"eval-run-{run.pk}").exists()
    assert not Memory.objects.filter(scope__path__startswith=f"eval-run-{run.pk}/").exists()
    assert AuditEvent.objects.filter(action="evaluation.sandbox_drop", target_id=str(run.pk)).exists()
    full = run.results["strategies"]["full"]
    assert full["all"]["questions"] == 4 and set(full["categories"]) == {
        "1 multi-hop",
        "2 temporal",
        "4 single-hop",
    }
    assert all(0.0 <= full["all"][f"recall@{k}"] <= 1.0 for k in (1, 5, 10)) and full["latency_ms_p50"] > 0
    assert set(run.results["strategies"]) == {"full", "vector", "keyword", "bm25"}
    tasks = run.results["tasks"]
    assert len(tasks) == 4 and all(
        set(t["expected"]) <= {"D1:3", "D1:5", "D2:1", "D2:2", "D2:3"} for t in tasks
    )
    # a missed question kept the texts of its evidence before the workspace went (evaluation.misses)
    misses = list(EvaluationMiss.objects.filter(run=run))
    assert len(misses) == run.results["miss_count"] == sum(1 for t in tasks if not t["passed"])
    assert all(e["text"] for m in misses for e in m.evidence)
    assert run.environment.get("postgres") and run.finished_at is not None
    # The page: its figures and every question (the tiny conversation lets most pass: show them all).
    page = owner_client.get(f"/evaluation/runs/{run.pk}/", {"show": "all"}).content.decode()
    assert "When did Caroline go to the LGBTQ support group?" in page and "recall@5" in page
    # A reviewer of the workspace sees it; another workspace's owner neither sees nor lists it.
    assert signed_in(reviewer, "pw-rami").get(f"/evaluation/runs/{run.pk}/").status_code == 200
    stranger = signed_in(outsider, "pw-otto")
    assert stranger.get(f"/evaluation/runs/{run.pk}/").status_code == 404
    assert f'data-run="{run.pk}"'.encode() not in stranger.get("/evaluation/").content
    assert stranger.get("/evaluation/data.json", {"run": run.pk}).status_code == 404
    listing = owner_client.get("/evaluation/").content.decode()
    assert f'data-run="{run.pk}"' in listing and 'id="retrieval-chart"' in listing
    data = owner_client.get("/evaluation/data.json", {"run": run.pk}).json()
    assert data["kind"] == "retrieval" and [r["name"] for r in data["rows"]] == [
        "full",
        "vector",
        "keyword",
        "bm25",
    ]


def test_a_replay_run_lists_its_tasks_and_a_failure_shows_what_the_packet_held(reviewer_client, history):
    run = EvaluationRun.objects.create(
        suite="standard",
        seed=3,
        strategies=["full"],
        task_count=2,
        results={
            "strategies": {"full": {"overall": 0.5, "categories": {"keyed": 0.5}, "metrics": {}}},
            "failures": [
                {
                    "task": "keyed-007",
                    "category": "keyed",
                    "strategy": "full",
                    "failures": ["expected memory `fmt_v2` in constraints; it was not in the packet"],
                    "held": [{"slot": "evidence", "memory_id": 41, "text": "Export slides as PDF"}],
                }
            ],
            "failure_count": 1,
            "outcomes": [["keyed-007", "keyed", "full", False], ["keyed-008", "keyed", "full", True]],
        },
    )
    page = reviewer_client.get(f"/evaluation/runs/{run.pk}/").content.decode()
    assert "keyed-007" in page and "expected memory `fmt_v2` in constraints" in page
    assert "Export slides as PDF" in page and 'data-task="keyed-008"' not in page
    everything = reviewer_client.get(f"/evaluation/runs/{run.pk}/", {"show": "all"}).content.decode()
    assert 'data-task="keyed-008"' in everything and 'data-passed="yes"' in everything
    assert Client().get(f"/evaluation/runs/{run.pk}/").status_code == 302


def test_the_history_lists_every_run_paged_in_constant_queries(
    reviewer, reviewer_client, history, django_assert_max_num_queries
):
    for i in range(30):
        EvaluationRun.objects.create(
            suite=f"standard-{i}", seed=i, results={"strategies": {"full": {"overall": 0.5}}}
        )
    first = reviewer_client.get("/evaluation/").content.decode()
    assert first.count('data-run="') == 25 and "standard-29" in first and "standard-0<" not in first
    second = reviewer_client.get("/evaluation/", {"page": 2}).content.decode()
    assert second.count('data-run="') == 5 and "standard-0<" in second
    assert reviewer_client.get("/evaluation/", {"page": "x"}).status_code == 400
    with django_assert_max_num_queries(4):  # the grants, their scopes, the count, the rows
        page = evaluation_runs_page(reviewer, 1)
        rows = [(r.suite, r.replay_overall, r.workspace) for r in page.object_list]
    assert len(rows) == 25 and rows[0][1] == "0.5"


def test_a_longmemeval_upload_is_detected_and_a_bad_format_name_refused(owner, workspace_scope):
    from governance.evaluation.runs import UPLOAD_BAD_FORMAT, parse_upload
    from tests.governance.evaluation.test_benchmark_files import LONGMEMEVAL

    fmt, _, loaded = parse_upload(name="lme.json", content=json.dumps(LONGMEMEVAL).encode(), fmt=None)
    assert fmt == "longmemeval" and loaded.questions
    from governance.errors import InvalidInput

    with pytest.raises(InvalidInput) as refused:
        parse_upload(name="lme.json", content=json.dumps(LONGMEMEVAL).encode(), fmt="csv")
    assert refused.value.message == UPLOAD_BAD_FORMAT


def test_an_uploaded_files_run_shows_the_table_evaluate_retrieval_prints(owner_client, workspace_scope):
    """A row per category, then answerable and all, with each path's recall@1/5/10: the same figures, in
    the same shape, as the command's table (governance.evaluation.report.recall_by_category)."""
    from governance.evaluation.report import retrieval_table

    def part(n, r1, r5, r10):
        return {"questions": n, "recall@1": r1, "recall@5": r5, "recall@10": r10}

    body = {
        "all": part(3, 0.333, 0.667, 1.0),
        "answerable": part(2, 0.5, 0.75, 1.0),
        "categories": {"1 multi-hop": part(2, 0.5, 0.75, 1.0), "5 adversarial": part(1, 0.0, 0.5, 0.999)},
        "newer_first": {"questions": 0, "rate": None},
        "latency_ms_p50": 12.5,
        "latency_ms_p95": 20.0,
    }
    results = {"strategies": {"full": body, "bm25": {**body, "all": part(3, 0.111, 0.222, 0.444)}}}
    run = EvaluationRun.objects.create(
        suite="retrieval:locomo.json",
        seed=0,
        workspace=Workspace.objects.get(slug="acme"),
        state="done",
        task_count=3,
        strategies=["full", "bm25"],
        results=results,
    )
    page = owner_client.get(f"/evaluation/runs/{run.pk}/").content.decode()
    for label in ("1 multi-hop (2)", "5 adversarial (1)", "answerable (2)", "all (3)"):
        assert label in page and label in retrieval_table(results)
    assert page.count('scope="colgroup"') == 2 and "0.999" in page and "0.444" in page
