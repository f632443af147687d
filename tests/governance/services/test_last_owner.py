"""No scope is left without an owner: revoking the last owner grant, or emptying the last owning team,
is a 409 with LAST_OWNER in the service, the API (whatever role's token asks) and the dashboard."""

from __future__ import annotations

import pytest
from django.urls import reverse

from governance.errors import LastOwner
from governance.models import Grant, Role
from governance.permissions import LAST_OWNER
from governance.services.grant_membership import group_member_add, group_member_remove
from governance.services.principal import grant_add, grant_revoke, principal_ensure, user_ensure
from tests.conftest import token_client, wait_for, waiting_on_a_lock
from tests.memoryui.conftest import signed_in


def _owner_grant(principal, scope):
    return Grant.objects.get(principal=principal, scope=scope, role=Role.OWNER)


def test_the_last_user_owner_of_a_scope_cannot_be_revoked(workspace_scope, owner):
    grant = _owner_grant(owner, workspace_scope)
    with pytest.raises(LastOwner) as caught:
        grant_revoke(grant_id=grant.pk, actor=owner, reason="leaving")
    assert caught.value.status == 409
    assert caught.value.message == LAST_OWNER.format(path="acme")
    assert Grant.objects.filter(pk=grant.pk).exists()


def test_an_owner_may_go_once_another_user_owns_the_scope_or_above(workspace_scope, project_scope, owner):
    nina = user_ensure(username="nina", password="pw-nina", actor=None)
    sub = grant_add(principal=nina, scope=project_scope, role=Role.OWNER, actor=owner)
    # nina's owner grant on acme/slides is covered by olivia's on acme: it may go.
    grant_revoke(grant_id=sub.pk, actor=owner, reason="moved team")
    grant_add(principal=nina, scope=workspace_scope, role=Role.OWNER, actor=owner)
    grant_revoke(grant_id=_owner_grant(owner, workspace_scope).pk, actor=owner, reason="handing over")
    assert not Grant.objects.filter(principal=owner).exists()


def test_an_owner_on_a_child_scope_does_not_cover_its_parent(workspace_scope, project_scope, owner):
    nina = user_ensure(username="nina", password="pw-nina", actor=None)
    grant_add(principal=nina, scope=project_scope, role=Role.OWNER, actor=owner)
    with pytest.raises(LastOwner):
        grant_revoke(grant_id=_owner_grant(owner, workspace_scope).pk, actor=owner, reason="x")


def test_an_agent_holding_owner_does_not_count_as_an_owner(workspace_scope, owner):
    bot = principal_ensure(name="ops-bot", kind="agent", actor=None)
    # A row from before agents were capped at the agent role (grant_add refuses it now, issue 20).
    Grant.objects.create(principal=bot, scope=workspace_scope, role=Role.OWNER)
    with pytest.raises(LastOwner):
        grant_revoke(grant_id=_owner_grant(owner, workspace_scope).pk, actor=owner, reason="x")


def test_a_team_owns_only_while_it_has_a_member(workspace_scope, owner):
    team = principal_ensure(name="platform", kind="group", actor=None, workspace=workspace_scope.workspace)
    grant_add(principal=team, scope=workspace_scope, role=Role.OWNER, actor=owner)
    with pytest.raises(LastOwner):  # an empty team covers nothing
        grant_revoke(grant_id=_owner_grant(owner, workspace_scope).pk, actor=owner, reason="x")
    nina = user_ensure(username="nina", password="pw-nina", actor=None)
    group_member_add(group=team, member=nina, actor=owner)
    grant_revoke(grant_id=_owner_grant(owner, workspace_scope).pk, actor=owner, reason="the team owns it")
    # Now the team is the only owner: its last member cannot leave it, and its grant cannot go.
    with pytest.raises(LastOwner) as caught:
        group_member_remove(group=team, member=nina, actor=nina, reason="leaving")
    assert caught.value.message == LAST_OWNER.format(path="acme")
    assert team.members.filter(pk=nina.pk).exists()
    with pytest.raises(LastOwner):
        grant_revoke(grant_id=_owner_grant(team, workspace_scope).pk, actor=nina, reason="x")


def test_a_team_member_may_leave_while_another_member_remains(workspace_scope, owner):
    team = principal_ensure(name="platform", kind="group", actor=None, workspace=workspace_scope.workspace)
    grant_add(principal=team, scope=workspace_scope, role=Role.OWNER, actor=owner)
    nina = user_ensure(username="nina", password="pw-nina", actor=None)
    omar = user_ensure(username="omar", password="pw-omar", actor=None)
    group_member_add(group=team, member=nina, actor=owner)
    group_member_add(group=team, member=omar, actor=owner)
    grant_revoke(grant_id=_owner_grant(owner, workspace_scope).pk, actor=owner, reason="the team owns it")
    group_member_remove(group=team, member=omar, actor=nina, reason="moved")
    assert list(team.members.all()) == [nina]


def test_the_api_refuses_the_last_owner_revoke_with_409_for_the_owner(workspace_scope, owner):
    grant = _owner_grant(owner, workspace_scope)
    response = token_client(owner).delete(f"/api/v1/grants/{grant.pk}", {"reason": "leaving"}, format="json")
    assert response.status_code == 409
    assert response.json() == {"error": "last_owner", "message": LAST_OWNER.format(path="acme")}
    assert Grant.objects.filter(pk=grant.pk).exists()


@pytest.mark.parametrize("who", ["reviewer", "curator", "agent", "outsider"])
def test_the_api_never_lets_another_role_remove_the_last_owner(request, workspace_scope, owner, who):
    grant = _owner_grant(owner, workspace_scope)
    response = token_client(request.getfixturevalue(who)).delete(
        f"/api/v1/grants/{grant.pk}", {"reason": "x"}, format="json"
    )
    assert response.status_code in (403, 404)
    assert Grant.objects.filter(pk=grant.pk).exists()


def test_the_api_refuses_emptying_the_last_owning_team(workspace_scope, owner):
    team = principal_ensure(name="platform", kind="group", actor=None, workspace=workspace_scope.workspace)
    grant_add(principal=team, scope=workspace_scope, role=Role.OWNER, actor=owner)
    nina = user_ensure(username="nina", password="pw-nina", actor=None)
    group_member_add(group=team, member=nina, actor=owner)
    grant_revoke(grant_id=_owner_grant(owner, workspace_scope).pk, actor=owner, reason="the team owns it")
    response = token_client(nina).delete("/api/v1/groups/platform/members/nina")
    assert response.status_code == 409 and response.json()["error"] == "last_owner"
    assert team.members.filter(pk=nina.pk).exists()


def test_the_dashboard_does_not_offer_ones_own_last_owner_grant(workspace_scope, owner):
    client = signed_in(owner, "pw-olivia")
    rows = client.get(reverse("dashboard:governance")).context["grants"]
    mine = next(r for r in rows if r["grant"].principal_id == owner.pk)
    assert mine["last_owner"] and not mine["may_revoke"]


def test_the_dashboard_refuses_the_last_owner_revoke_with_409(workspace_scope, owner):
    grant = _owner_grant(owner, workspace_scope)
    client = signed_in(owner, "pw-olivia")
    confirm = client.get(reverse("dashboard:grant-revoke"), {"grant": grant.pk})
    assert confirm.status_code == 200 and confirm.context["blocked"]
    assert (
        LAST_OWNER.format(path="acme").encode() in confirm.content and b'name="reason"' not in confirm.content
    )
    response = client.post(reverse("dashboard:grant-revoke"), {"grant": grant.pk, "reason": "leaving"})
    assert response.status_code == 409 and LAST_OWNER.format(path="acme").encode() in response.content
    assert Grant.objects.filter(pk=grant.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_an_owner_whose_grant_is_revoked_while_they_revoke_another_removes_no_one(workspace_scope, owner):
    """Three owners. Xena revokes Yann's grant and her transaction is still open when Yann revokes Zoe's:
    Yann's first check passes (Xena has not committed), then he waits on the owner grants' lock. When Xena
    commits, Yann is no longer an owner, and his revoke is refused: it was checked only before the lock,
    and Zoe's grant went although an owner was still left (Xena)."""
    import threading

    from django.db import connection, transaction

    from governance.errors import NotFound, PermissionDenied

    xena, yann, zoe = (
        user_ensure(username=n, password=f"pw-{n}", actor=None) for n in ("xena", "yann", "zoe")
    )
    for person in (xena, yann, zoe):
        grant_add(principal=person, scope=workspace_scope, role=Role.OWNER, actor=None)
    of = {
        p.pk: Grant.objects.get(principal=p, scope=workspace_scope, role=Role.OWNER).pk for p in (yann, zoe)
    }
    revoked, release, results = threading.Event(), threading.Event(), {}

    def xena_revokes_yann():
        try:
            with transaction.atomic():
                grant_revoke(grant_id=of[yann.pk], actor=xena, reason="leaving")
                revoked.set()
                release.wait(30)
        finally:
            connection.close()

    def yann_revokes_zoe():
        try:
            grant_revoke(grant_id=of[zoe.pk], actor=yann, reason="tidy up")
            results["yann"] = None
        except Exception as exc:
            results["yann"] = exc
        finally:
            connection.close()

    first = threading.Thread(target=xena_revokes_yann)
    first.start()
    assert revoked.wait(30)
    second = threading.Thread(target=yann_revokes_zoe)
    second.start()

    try:
        wait_for(waiting_on_a_lock, timeout=30)  # Yann waits on the owner grants
    finally:
        release.set()
        first.join(30)
        second.join(30)
    assert isinstance(results["yann"], NotFound | PermissionDenied), results
    assert Grant.objects.filter(pk=of[zoe.pk]).exists()
    assert not Grant.objects.filter(pk=of[yann.pk]).exists()
