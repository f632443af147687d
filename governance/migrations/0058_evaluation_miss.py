"""The misses an uploaded file's run keeps for study, one row each (governance.models.EvaluationMiss).
Runs stored before kept a failing question's texts inside their results JSON (`expected_texts`,
`ranked_texts`), where no forget reached them: they move into miss rows (without scores, hashes or gold
answer, which those runs did not keep) and leave the results."""

import django.db.models.deletion
from django.db import migrations, models

TEXT_KEYS = ("expected_texts", "ranked_texts")


def move_texts(apps, schema_editor):
    Run = apps.get_model("governance", "EvaluationRun")
    Miss = apps.get_model("governance", "EvaluationMiss")
    for run in Run.objects.filter(suite__startswith="retrieval:").order_by("pk").iterator():
        tasks = (run.results or {}).get("tasks") or []
        held = [t for t in tasks if isinstance(t, dict) and any(k in t for k in TEXT_KEYS)]
        if not held:
            continue
        rows = []
        for position, task in enumerate(sorted(held, key=lambda t: str(t.get("category") or ""))[:300]):
            ranked = [str(r) for r in task.get("ranked") or []]
            rank_of = {}
            for rank, ref in enumerate(ranked, start=1):
                rank_of.setdefault(ref, rank)
            texts = {
                e.get("ref"): e.get("text") or ""
                for e in [*(task.get("expected_texts") or []), *(task.get("ranked_texts") or [])]
            }
            expected = [str(r) for r in task.get("expected") or []]

            def turn(ref):
                return {"ref": ref, "speaker": "", "text": str(texts.get(ref) or "")[:300], "hash": "", "cut": False}

            rows.append(
                Miss(
                    run=run,
                    position=position,
                    question_id=str(task.get("id") or "")[:200],
                    category=str(task.get("category") or "")[:100],
                    question=str(task.get("question") or "")[:1000],
                    error=str(task.get("error") or "")[:2000],
                    recall={k: task.get(k) for k in ("recall@1", "recall@5", "recall@10")},
                    evidence=[{**turn(ref), "rank": rank_of.get(ref)} for ref in expected],
                    hits=[
                        {**turn(ref), "rank": rank, "memory_id": None, "score": None, "evidence": ref in expected}
                        for rank, ref in enumerate(ranked, start=1)
                    ],
                )
            )
        Miss.objects.bulk_create(rows)
        for task in tasks:
            if isinstance(task, dict):
                for key in TEXT_KEYS:
                    task.pop(key, None)
        run.results = {**run.results, "tasks": tasks}
        run.save(update_fields=["results"])


class Migration(migrations.Migration):

    dependencies = [
        ('governance', '0057_session_requirements'),
    ]

    operations = [
        migrations.CreateModel(
            name='EvaluationMiss',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('position', models.PositiveIntegerField()),
                ('question_id', models.CharField(max_length=200)),
                ('category', models.CharField(max_length=100)),
                ('question', models.TextField()),
                ('answer', models.TextField(blank=True, default='')),
                ('error', models.TextField(blank=True, default='')),
                ('recall', models.JSONField(default=dict)),
                ('evidence', models.JSONField(default=list)),
                ('hits', models.JSONField(default=list)),
                ('redacted', models.BooleanField(default=False)),
                ('run', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='misses', to='governance.evaluationrun')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('run', 'position'), name='evaluation_miss_position_unique')],
            },
        ),
        migrations.RunPython(move_texts, migrations.RunPython.noop),
    ]
