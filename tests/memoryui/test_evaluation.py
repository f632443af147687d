from django.apps import apps
from django.urls import reverse


def test_evaluation_page_says_so_when_there_is_no_run(reviewer_client, history):
    response = reviewer_client.get(reverse("dashboard:evaluation"))
    assert response.status_code == 200 and b"No evaluation run yet" in response.content


def test_evaluation_page_shows_the_latest_run(reviewer_client, history):
    model = apps.get_model("governance", "EvaluationRun")
    model.objects.create(suite="old", seed=1, results={"strategies": {"full": {"overall": 0.1}}})
    model.objects.create(
        suite="replay",
        seed=7,
        strategies=["recent_only", "full"],
        results={
            "strategies": {
                "recent_only": {"overall": 0.41, "categories": {"keyed": 0.2}, "metrics": {"p95_ms": 3.0}},
                "full": {"overall": 0.93, "categories": {"keyed": 0.97}, "metrics": {"p95_ms": 12.5}},
            }
        },
    )
    response = reviewer_client.get(reverse("dashboard:evaluation"))
    body = response.content.decode()
    assert "replay" in body and "0.930" in body and "keyed" in body
    data = reviewer_client.get(reverse("dashboard:evaluation-data")).json()
    assert [r["name"] for r in data["rows"]] == ["recent_only", "full"]  # the run's own order
