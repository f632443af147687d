from django.urls import reverse

from governance.models import AuditEvent, Grant, Role
from governance.services.principal import user_ensure
from memoryui.views.governance import REVOKE_REASON_REQUIRED, UNKNOWN_PRINCIPAL


def test_owner_sees_every_grant_of_the_workspace_and_may_revoke_all_but_its_last_owner_grant(
    owner_client, reviewer, curator, history
):
    rows = owner_client.get(reverse("dashboard:governance")).context["grants"]
    names = {(r["grant"].principal.name, r["grant"].role) for r in rows}
    assert {("olivia", "owner"), ("rami", "reviewer"), ("cora", "curator")} <= names
    assert all(r["may_revoke"] for r in rows if r["grant"].principal.name != "olivia")
    assert not any(r["may_revoke"] for r in rows if r["grant"].principal.name == "olivia")


def test_reviewer_sees_grants_of_its_scope_but_no_edit_controls(reviewer_client, owner, history):
    response = reviewer_client.get(reverse("dashboard:governance"))
    assert {r["grant"].principal.name for r in response.context["grants"]} == {"rami"}
    assert not any(r["may_revoke"] for r in response.context["grants"])
    assert response.context["owned_scopes"] == []
    assert b"Add grant" not in response.content


def test_owner_adds_and_revokes_a_grant(owner_client, history):
    user_ensure(username="nina", password="pw-nina", actor=None)
    added = owner_client.post(
        reverse("dashboard:grant-add"), {"principal": "nina", "role": "viewer", "grant_scope": "acme/slides"}
    )
    assert added.status_code == 302
    grant = Grant.objects.get(principal__name="nina")
    assert grant.role == Role.VIEWER
    confirm = owner_client.get(reverse("dashboard:grant-revoke"), {"grant": grant.pk})
    assert confirm.status_code == 200 and b'name="reason"' in confirm.content
    assert Grant.objects.filter(pk=grant.pk).exists()  # asking to revoke is not revoking
    revoked = owner_client.post(
        reverse("dashboard:grant-revoke"), {"grant": grant.pk, "reason": "left the project"}
    )
    assert revoked.status_code == 302 and not Grant.objects.filter(principal__name="nina").exists()
    event = AuditEvent.objects.filter(action="grant.revoke").latest("pk")
    assert event.reason == "left the project"


def test_a_revoke_without_a_reason_is_a_400_and_keeps_the_grant(owner_client, reviewer, history):
    grant = Grant.objects.get(principal=reviewer)
    response = owner_client.post(reverse("dashboard:grant-revoke"), {"grant": grant.pk, "reason": "  "})
    assert response.status_code == 400 and REVOKE_REASON_REQUIRED.encode() in response.content
    assert Grant.objects.filter(pk=grant.pk).exists()


def test_the_grant_form_offers_known_principals_and_hides_others(owner_client, reviewer, outsider, history):
    user_ensure(username="nina", password="pw-nina", actor=None)
    names = {n for n, _ in owner_client.get(reverse("dashboard:governance")).context["known_principals"]}
    assert {"olivia", "rami", "nina"} <= names and "otto" not in names
    response = owner_client.post(
        reverse("dashboard:grant-add"), {"principal": "otto", "role": "viewer", "grant_scope": "acme"}
    )
    assert response.status_code == 400 and UNKNOWN_PRINCIPAL.encode() in response.content


def test_grant_edits_by_a_non_owner_are_refused_and_change_nothing(reviewer_client, owner, history):
    user_ensure(username="nina", password="pw-nina", actor=None)
    response = reviewer_client.post(
        reverse("dashboard:grant-add"), {"principal": "nina", "role": "viewer", "grant_scope": "acme/slides"}
    )
    assert response.status_code == 403
    owner_grant = Grant.objects.get(principal=owner)
    assert (
        reviewer_client.post(reverse("dashboard:grant-revoke"), {"grant": owner_grant.pk}).status_code == 404
    )
    assert Grant.objects.filter(pk=owner_grant.pk).exists()
    assert not Grant.objects.filter(principal__name="nina").exists()


def test_unknown_principal_is_a_400_with_a_sentence(owner_client, history):
    response = owner_client.post(
        reverse("dashboard:grant-add"), {"principal": "nobody", "role": "viewer", "grant_scope": "acme"}
    )
    assert response.status_code == 400 and UNKNOWN_PRINCIPAL.encode() in response.content


def test_audit_log_is_filtered_to_readable_scopes_and_by_action(reviewer_client, history):
    response = reviewer_client.get(reverse("dashboard:governance-audit"), {"action": "memory.supersede"})
    events = list(response.context["audit"].object_list)
    assert events and {e.action for e in events} == {"memory.supersede"}
    everything = reviewer_client.get(reverse("dashboard:governance-audit")).context["audit"].object_list
    assert all(e.scope_path.startswith("acme/slides") for e in everything)


def test_chain_verification_state_is_reported_to_owners(owner_client, history):
    response = owner_client.get(reverse("dashboard:audit-verify"))
    assert response.status_code == 200 and b'data-chain="ok"' in response.content


def test_propagation_state_lists_each_store_of_recent_changes(reviewer_client, history):
    rows = reviewer_client.get(reverse("dashboard:governance-propagation")).context["propagation"]
    assert rows
    assert {d.store for d in rows[0]["deliveries"]}
    memory_ids = {r["outbox"].memory_id for r in rows if r["outbox"].memory_id}
    assert history["secret"].pk not in memory_ids
