"""`bench_index_cost` on a small LoCoMo-shaped file in both languages, with the real embedder: every part
is counted on the texts the import gives the model (a person's two-sentence turn has its passages, a turn
after another carries it as context, the candidates read from the turns are embedded too), the figures are
printed per turn, and nothing it wrote is left behind."""

from __future__ import annotations

import io
import json

from django.core.management import call_command

from governance.models import Memory, Scope

SAMPLES = [
    {
        "sample_id": "conv-en",
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Mel",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {
                    "speaker": "Caroline",
                    "dia_id": "D1:1",
                    "text": "I went to a support group yesterday evening. It was the first time I spoke about my transition there.",
                },
                {"speaker": "Mel", "dia_id": "D1:2", "text": "That sounds brave. How was it?"},
            ],
        },
        "qa": [
            {"question": "When did Caroline go to the support group?", "evidence": ["D1:1"], "category": 2}
        ],
    },
    {
        "sample_id": "conv-zh",
        "conversation": {
            "speaker_a": "李雷",
            "speaker_b": "韩梅梅",
            "session_1_date_time": "9:00 am on 1 June, 2023",
            "session_1": [
                {"speaker": "李雷", "dia_id": "D1:1", "text": "我上周去杭州看了西湖。"},
                {"speaker": "韩梅梅", "dia_id": "D1:2", "text": "西湖的荷花开了吗？"},
            ],
        },
        "qa": [{"question": "李雷去了哪里？", "evidence": ["D1:1"], "category": 4}],
    },
]


def test_each_part_of_an_import_is_timed_on_the_texts_the_import_embeds(tmp_path, db):
    path = tmp_path / "locomo_small.json"
    path.write_text(json.dumps(SAMPLES, ensure_ascii=False), encoding="utf-8")
    out, figures = io.StringIO(), tmp_path / "figures.json"
    call_command("bench_index_cost", file=str(path), fmt="locomo", json_out=str(figures), stdout=out)
    printed = out.getvalue()
    assert "locomo_small.json: 4 turns" in printed
    parts = json.loads(figures.read_text())["parts"]
    assert parts["write"]["texts"] == 4
    assert parts["turn alone"]["texts"] == 4
    # Each turn after the first of its session carries the one before it.
    context = parts["context (the turn before, in the turn's vector)"]
    assert context["texts"] == 4 and context["chars"] > 0
    assert parts["passages"]["texts"] == 2  # Caroline's two sentences; the others have one
    for part in parts.values():
        assert part["seconds"] >= 0
    assert parts["turn alone"]["seconds"] > 0
    assert "ms per turn" in printed and "\nsum |" in printed
    assert not Memory.objects.filter(scope__path__startswith="bench-index/run-").exists()
    assert not Scope.objects.filter(path__startswith="bench-index/run-").exists()
