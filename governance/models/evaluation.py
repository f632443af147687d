from django.db import models

# The slugs of the workspaces evaluation runs create for themselves ("eval-run-<run id>"): nobody may name a
# workspace so (services.workspace), and a run never uses one it did not create (evaluation.runs).
SANDBOX_PREFIX = "eval-run-"


class EvaluationRun(models.Model):
    """One evaluation run: of the replay suite (`manage.py evaluate`, site-wide: no workspace), results in
    the shape `--json` writes ({"strategies": {name: {"overall", "categories", "metrics"}}}); or of a
    conversation file uploaded on the dashboard (suite "retrieval:<file>", of one workspace, run by a
    Celery task into a workspace of its own), results {"strategies": {path: {"all", "categories", …}},
    "tasks": [per question]}. The dashboard's evaluation page lists them."""

    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    created_at = models.DateTimeField(auto_now_add=True)
    # Whose run it is: None for the site-wide replay suite; an uploaded file's run is seen only in the
    # workspace it was started from (its questions and turns are that team's data).
    workspace = models.ForeignKey(
        "governance.Workspace",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="evaluation_runs",
    )
    started_by = models.ForeignKey(
        "governance.Principal", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.DONE)
    error = models.TextField(blank=True, default="")
    # The uploaded file until the task has read it (emptied then): the request never runs the evaluation.
    upload = models.TextField(blank=True, default="")
    upload_format = models.CharField(max_length=12, blank=True, default="")
    # The workspace the task imported the file's conversations into (nobody holds a grant there).
    sandbox = models.CharField(max_length=63, blank=True, default="")
    # The same workspace by identity, created by the run itself (never one found by its slug): dropped
    # through this reference, so a workspace someone else named like a sandbox is never used or dropped.
    sandbox_workspace = models.ForeignKey(
        "governance.Workspace", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    suite = models.CharField(max_length=50)
    seed = models.BigIntegerField()
    strategies = models.JSONField(default=list)
    task_count = models.PositiveIntegerField(default=0)
    duration_s = models.FloatField(default=0.0)
    # The machine and embedder the figures were measured with, so a figure is never quoted without it.
    environment = models.JSONField(default=dict, blank=True)
    results = models.JSONField(default=dict)

    class Meta:
        indexes = [models.Index(fields=["-created_at"], name="evaluation_run_latest")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(state__in=["queued", "running", "done", "failed"]),
                name="evaluation_run_state_valid",
            )
        ]

    def __str__(self) -> str:
        return f"evaluation {self.suite} seed={self.seed} @ {self.created_at:%Y-%m-%d %H:%M}"


class EvaluationMiss(models.Model):
    """One question an uploaded file's run missed (an evidence turn not among the first 10 the `full` path
    ranked), kept so the miss can be studied after the run's own workspace is gone: the question, its gold
    answer, its evidence turns and the top hits, each turn's text cut to a bound. The texts live only as
    long as the run (and so its workspace: both cascade), and a forget in the run's workspace takes its
    words out of them (governance.propagation.misses)."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="misses")
    position = models.PositiveIntegerField()  # the order the page lists them in (by category, then file)
    question_id = models.CharField(max_length=200)
    category = models.CharField(max_length=100)
    question = models.TextField()
    answer = models.TextField(blank=True, default="")
    error = models.TextField(blank=True, default="")
    recall = models.JSONField(default=dict)  # {"recall@1": …, "recall@5": …, "recall@10": …}
    # [{"ref", "speaker", "text", "hash", "cut", "rank"}]: rank among the hits, None when not in them;
    # `hash` is the whole turn's content hash, so a forget of a turn longer than the kept text still finds it.
    evidence = models.JSONField(default=list)
    # [{"rank", "ref", "memory_id", "score", "speaker", "text", "hash", "cut", "evidence"}]; memory_id is
    # the run's own workspace's, which no longer exists.
    hits = models.JSONField(default=list)
    # Whether a forget took words out of this miss (the page says so).
    redacted = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "position"], name="evaluation_miss_position_unique")
        ]

    def __str__(self) -> str:
        return f"miss {self.question_id} of run {self.run_id}"
