from django.db import models


class EvaluationRun(models.Model):
    """One run of the replay suite (`manage.py evaluate`): which suite, seed and strategies, and the
    results in the shape `--json` writes ({"strategies": {name: {"overall", "categories", "metrics"}}}).
    The dashboard's evaluation page shows the latest."""

    created_at = models.DateTimeField(auto_now_add=True)
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

    def __str__(self) -> str:
        return f"evaluation {self.suite} seed={self.seed} @ {self.created_at:%Y-%m-%d %H:%M}"
