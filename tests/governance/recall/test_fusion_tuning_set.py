"""On the shipped question → memory set, fused recall beats each single path, and the decoys placed in a
sibling project and another workspace (same wording, other facts) are never returned."""

from __future__ import annotations

import json

from devtools.evaluation import tuning


def test_fused_recall_beats_vector_only_and_lexical_only_on_the_tuning_set(db, agent):
    data = tuning.load()
    ids = tuning.seed(data, project="acme/slides", sibling="acme/payments", other="globex/slides")
    from governance.models import Scope

    report = tuning.evaluate(data, ids, principal=agent, scope=Scope.objects.get(path="acme/slides"))
    print(json.dumps(report, indent=1, ensure_ascii=False))
    recall = report["recall"]
    for k in ("@1", "@3"):
        assert recall["fused"][k] > max(recall["vector"][k], recall["lexical"][k]), (k, recall)
    assert recall["fused"]["@5"] >= max(recall["vector"]["@5"], recall["lexical"]["@5"]), recall
    assert recall["full"]["@3"] >= recall["fused"]["@3"] - 0.05
    assert all(v == 0 for v in report["decoys_returned"].values())
