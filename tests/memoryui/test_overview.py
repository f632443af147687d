from django.urls import reverse


def test_overview_counts_only_memories_in_the_readers_scopes(reviewer_client, history):
    response = reviewer_client.get(reverse("dashboard:overview"))
    counts = response.context["counts"]
    # acme/slides holds 4 memories; the sibling scope's secret is not counted.
    assert counts["total"] == 4
    assert counts["review_queue"] == 1
    assert b"Payments API key" not in response.content


def test_owner_of_the_workspace_counts_every_scope_below_it(owner_client, history):
    counts = owner_client.get(reverse("dashboard:overview")).context["counts"]
    assert counts["total"] == 5
    assert dict((p, n) for p, n in counts["by_scope"]) == {"acme/slides": 4, "acme/payments": 1}


def test_outsider_sees_an_empty_overview_with_explanations(outsider_client, history):
    response = outsider_client.get(reverse("dashboard:overview"))
    assert response.context["counts"]["total"] == 0
    assert b"No memories here yet" in response.content


def test_activation_histogram_counts_recallable_memories_and_gives_the_threshold(
    reviewer_client, history, settings
):
    data = reviewer_client.get(reverse("dashboard:activation-histogram")).json()
    # Recallable: the active PPTX fact, the proposal, the episode (the superseded one is not).
    assert sum(data["counts"]) == 3
    assert data["threshold"] == settings.MEMORY_COLD_THRESHOLD
    assert len(data["edges"]) == len(data["counts"]) + 1


def test_recent_changes_show_audit_events_of_readable_scopes_only(reviewer_client, history):
    recent = reviewer_client.get(reverse("dashboard:overview")).context["recent"]
    assert recent and all(e.scope_path.startswith("acme/slides") for e in recent)
