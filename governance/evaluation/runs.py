"""Evaluation runs of an uploaded conversation file (LoCoMo or LongMemEval, as published): the request
stores the file and queues a Celery task; the task imports its conversations into a workspace of the
run's own (`eval-run-<id>`, where nobody holds a grant, so no real scope sees a turn of it), measures
retrieval on its questions (governance.evaluation.retrieval), stores the figures and each question's
verdict on the EvaluationRun row, and each missed question with its gold answer, evidence turns and top
hits as an EvaluationMiss (governance.evaluation.misses), and then throws that workspace away."""

from __future__ import annotations

import json
import logging
import time
from datetime import timedelta
from io import StringIO

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from governance.errors import Conflict, DomainError, InvalidInput
from governance.evaluation.conversations import Loaded, load_locomo, load_longmemeval
from governance.models import EvaluationMiss, EvaluationRun, Memory, Principal, Scope, Turn, Workspace
from governance.models.evaluation import SANDBOX_PREFIX
from governance.permissions import require_evaluation_start, workspace_root
from governance.propagation.stores import repair
from governance.runtime import degraded
from governance.services.audit import AuditEntry, audit_record
from governance.services.conversation_import import conversation_ingest

logger = logging.getLogger(__name__)

UPLOAD_FORMATS = ("locomo", "longmemeval")
UPLOAD_TOO_LARGE = "The file is {size} bytes; an evaluation upload is at most {limit} bytes."
UPLOAD_EMPTY = "The file is empty."
UPLOAD_NOT_UTF8 = "The file is not UTF-8 text."
UPLOAD_NOT_JSON = "The file is not JSON: a LoCoMo or LongMemEval file is a JSON list."
UPLOAD_TOO_DEEP = "The file nests lists or objects too deeply to be a LoCoMo or LongMemEval file."
UPLOAD_BAD_FORMAT = "The format is one of: " + ", ".join(UPLOAD_FORMATS) + " (or leave it to be detected)."
UPLOAD_NO_QUESTIONS = "The file holds no question with evidence turns to evaluate."
DETAIL_PATH = "full"
DETAIL_TASKS = 2000  # questions whose verdict is kept per run (their texts: evaluation.misses, bounded)


class UploadTooLarge(DomainError):
    code = "upload_too_large"
    status = 413


def upload_limit() -> int:
    return int(settings.EVALUATION_UPLOAD_MAX_BYTES)


def parse_upload(
    *, name: str, content: bytes, fmt: str | None, prefix: str = "check"
) -> tuple[str, str, Loaded]:
    """(format, text, loaded) of an uploaded file, or a 4xx naming what is wrong with it."""
    if len(content) > upload_limit():
        raise UploadTooLarge(UPLOAD_TOO_LARGE.format(size=len(content), limit=upload_limit()), field="file")
    if not content.strip():
        raise InvalidInput(UPLOAD_EMPTY, field="file")
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(UPLOAD_NOT_UTF8, field="file") from exc
    if fmt and fmt not in UPLOAD_FORMATS:
        raise InvalidInput(UPLOAD_BAD_FORMAT, field="format")
    loaded = _load(text, fmt, prefix=prefix, name=name)
    if not loaded[1].questions:
        raise InvalidInput(UPLOAD_NO_QUESTIONS, field="file")
    return loaded[0], text, loaded[1]


def _load(text: str, fmt: str | None, *, prefix: str, name: str) -> tuple[str, Loaded]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(UPLOAD_NOT_JSON, field="file") from exc
    except RecursionError as exc:  # the decoder's depth is Python's recursion limit: a 400, not a 500
        raise InvalidInput(UPLOAD_TOO_DEEP, field="file") from exc
    if not isinstance(data, list):
        raise InvalidInput(UPLOAD_NOT_JSON, field="file")
    if not fmt:  # LongMemEval items carry a haystack; anything else is read as LoCoMo
        first = data[0] if data and isinstance(data[0], dict) else {}
        fmt = "longmemeval" if "haystack_sessions" in first or "question_id" in first else "locomo"
    loader = load_locomo if fmt == "locomo" else load_longmemeval
    try:
        return fmt, loader(data, prefix=prefix, name=name)
    except ValueError as exc:  # the loaders name the item and what is wrong with it
        raise InvalidInput(str(exc), field="file") from exc


def evaluation_request(
    *, workspace: Workspace, name: str, content: bytes, fmt: str | None, actor: Principal | None
) -> EvaluationRun:
    """Queue the evaluation of an uploaded conversation file for `workspace` (owners, site administrators).
    The file is checked here (size, JSON, format, at least one question); the work runs in a task."""
    root = workspace_root(workspace)
    require_evaluation_start(actor, root)
    name = (name or "upload").rsplit("/", 1)[-1][:120]
    fmt, text, loaded = parse_upload(name=name, content=content, fmt=fmt or None)
    from governance.evaluation.retrieval import search_paths

    with transaction.atomic():
        run = EvaluationRun.objects.create(
            suite=f"retrieval:{name}"[:50],
            seed=0,
            strategies=[*search_paths(), "bm25"],
            task_count=len(loaded.questions),
            state=EvaluationRun.State.QUEUED,
            workspace=workspace,
            started_by=actor,
            upload=text,
            upload_format=fmt,
            environment={},
        )
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "evaluation.request",
                "evaluation_run",
                str(run.pk),
                root.path,
                "",
                run.state,
                "",
                {"file": name, "format": fmt, "questions": len(loaded.questions), "bytes": len(content)},
            ),
        )
        # Like every publish that must not wait on a dead broker (governance/runtime/degraded.py): bounded,
        # never raising; a run whose message was lost is queued again by the reconciler (runs_requeue).
        transaction.on_commit(lambda: _publish_run(run.pk))
    return run


def _publish_run(run_id: int) -> bool:
    return degraded.publish(lambda: run_retrieval_evaluation.delay(run_id), what=f"evaluation run {run_id}")


@repair("evaluation_runs_requeue")
def runs_requeue(*, older_than_seconds: float, limit: int = 50) -> int:
    """The reconciler's part: runs still queued this long after their request (their message lost while
    Redis was away) are queued again. A second message for a run already taken is harmless: only the
    worker that moves the run from queued to running does the work."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    ids = list(
        EvaluationRun.objects.filter(state=EvaluationRun.State.QUEUED, created_at__lt=cutoff)
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    return sum(1 for run_id in ids if _publish_run(run_id))


def evaluation_run_retrieval(*, run_id: int) -> EvaluationRun | None:
    """The task's work: claim the queued run (one worker only), import, measure, store. A failure is
    stored on the run with its reason; the upload is dropped either way."""
    claimed = EvaluationRun.objects.filter(pk=run_id, state=EvaluationRun.State.QUEUED).update(
        state=EvaluationRun.State.RUNNING
    )
    if not claimed:
        return None  # gone, or another worker has it
    run = EvaluationRun.objects.get(pk=run_id)
    sandbox = f"{SANDBOX_PREFIX}{run.pk}"
    started = time.perf_counter()
    try:
        results, misses = _measure(run, sandbox)
    except Exception as exc:  # noqa: BLE001 -- any failure is the run's result, shown on its page
        logger.exception("evaluation run %s failed", run_id)
        message = exc.message if isinstance(exc, DomainError) else f"{type(exc).__name__}: {exc}"
        evaluation_sandbox_drop(run=run, sandbox=sandbox)
        return _finish(
            run,
            state=EvaluationRun.State.FAILED,
            error=message[:2000],
            sandbox=sandbox,
            duration=time.perf_counter() - started,
        )
    duration = time.perf_counter() - started  # the figures' time, without the clean-up
    evaluation_sandbox_drop(run=run, sandbox=sandbox)
    return _finish(
        run,
        state=EvaluationRun.State.DONE,
        results=results,
        sandbox=sandbox,
        duration=duration,
        misses=misses,
    )


SANDBOX_TAKEN = (
    "The run's sandbox workspace {slug!r} exists already and is not this run's; the run does not "
    "use or drop a workspace it did not create."
)


def evaluation_sandbox_create(*, run: EvaluationRun, sandbox: str) -> Workspace:
    """The run's own workspace, created here and kept on the run by id. A workspace of that name that
    exists already is never reused (workspace_create refuses the prefix; one made before that rule
    stays someone else's): the run fails instead."""
    with transaction.atomic():
        if Workspace.objects.filter(slug=sandbox).exists() or Scope.objects.filter(path=sandbox).exists():
            raise Conflict(SANDBOX_TAKEN.format(slug=sandbox))
        workspace = Workspace.objects.create(slug=sandbox, name=f"evaluation run {run.pk}")
        root = Scope.objects.create(workspace=workspace, parent=None, name=sandbox, path=sandbox)
        Scope.objects.filter(pk=root.pk).update(tree=str(root.pk))
        EvaluationRun.objects.filter(pk=run.pk).update(sandbox_workspace=workspace, sandbox=sandbox)
        run.sandbox_workspace, run.sandbox = workspace, sandbox
        audit_record(
            actor=None,
            entry=AuditEntry(
                "evaluation.sandbox_create",
                "evaluation_run",
                str(run.pk),
                sandbox,
                "",
                "",
                "",
                {"workspace": workspace.pk},
                workspace_id=workspace.pk,
            ),
        )
    return workspace


def evaluation_sandbox_drop(*, run: EvaluationRun, sandbox: str = "") -> int:
    """Throw the run's own workspace away once measured: its memories (their relations, outbox rows,
    reinforcements go with them), turns, scopes (deepest first) and the workspace. Nobody ever held a grant
    there and nothing outside it refers to it; audit events that name its paths stay (append-only). Found
    by the run's reference (by id), never by its slug. Returns how many memories were removed."""
    workspace = (
        Workspace.objects.filter(pk=run.sandbox_workspace_id).first() if run.sandbox_workspace_id else None
    )
    if workspace is None:
        return 0
    sandbox = workspace.slug
    with transaction.atomic():
        removed, _ = Memory.objects.filter(scope__workspace=workspace).delete()
        Turn.objects.filter(scope__workspace=workspace).delete()
        for scope in sorted(Scope.objects.filter(workspace=workspace), key=lambda s: -s.path.count("/")):
            scope.delete()
        workspace.delete()
        audit_record(
            actor=None,
            entry=AuditEntry(
                "evaluation.sandbox_drop",
                "evaluation_run",
                str(run.pk),
                sandbox,
                "",
                "",
                "",
                {"rows": removed},
            ),
        )
    return removed


def _measure(run: EvaluationRun, sandbox: str) -> tuple[dict, list[EvaluationMiss]]:
    from governance.evaluation.misses import missed, misses_build
    from governance.evaluation.retrieval import evaluate_loaded

    fmt, loaded = _load(run.upload, run.upload_format, prefix=sandbox, name=run.suite)
    evaluation_sandbox_create(run=run, sandbox=sandbox)
    errors: list[str] = []
    conversation_ingest(loaded.turns, errors, no_embed=False, out=StringIO())  # each text embedded once, here
    if errors:
        raise ValueError(f"{len(errors)} lines could not be imported (first: {errors[0]})")
    results = evaluate_loaded(loaded.questions, detail_path=DETAIL_PATH)
    tasks = results.get("tasks", [])
    # The texts of the misses are read now, while the run's own workspace still holds the turns.
    misses = misses_build(run, tasks)
    for task in tasks:  # the results keep each question's verdict; its texts live in the misses only
        task["passed"] = not missed(task)
        task.pop("answer", None)
        task.pop("hits", None)
    results["tasks"] = tasks[:DETAIL_TASKS]
    results.update(
        miss_count=sum(1 for t in tasks if not t["passed"]),
        misses_kept=len(misses),
        format=fmt,
        skipped=loaded.skipped[:50],
        left_out=loaded.left_out[:50],
        sandbox=sandbox,
        turns=len(loaded.turns),
        pass_rule=f"every evidence turn among the first 10 the `{DETAIL_PATH}` path ranked",
    )
    return results, misses


def _finish(
    run: EvaluationRun,
    *,
    state: str,
    sandbox: str,
    duration: float,
    results: dict | None = None,
    error: str = "",
    misses: list[EvaluationMiss] | None = None,
) -> EvaluationRun:
    from governance.evaluation.environment import environment

    run.state, run.error, run.upload, run.sandbox = state, error, "", sandbox
    run.results, run.duration_s, run.finished_at = results or {}, round(duration, 2), timezone.now()
    run.environment = environment()
    with transaction.atomic():
        run.save(
            update_fields=[
                "state",
                "error",
                "upload",
                "sandbox",
                "results",
                "duration_s",
                "finished_at",
                "environment",
            ]
        )
        EvaluationMiss.objects.bulk_create(misses or [])  # with the figures they belong to, or not at all
        audit_record(
            actor=None,
            entry=AuditEntry(
                "evaluation.finish",
                "evaluation_run",
                str(run.pk),
                run.workspace.slug if run.workspace_id else "",
                EvaluationRun.State.RUNNING,
                state,
                error[:200],
                {"questions": run.task_count, "duration_s": run.duration_s},
            ),
        )
    return run


# An uploaded conversation file is imported (and embedded) and measured in one task: longer limits than
# the global ones, still capped; the upload size limit (EVALUATION_UPLOAD_MAX_BYTES) bounds the work.
# Defined beside its work under its old name, so queueing it needs no import of governance.tasks.
@shared_task(name="governance.tasks.run_retrieval_evaluation", soft_time_limit=1800, time_limit=1900)
def run_retrieval_evaluation(run_id: int) -> str:
    """Run a queued evaluation of an uploaded file (governance.evaluation.runs); idempotent: only the
    worker that moves the run from queued to running does the work."""
    run = evaluation_run_retrieval(run_id=run_id)
    return run.state if run is not None else "skipped"
