"""Two owners move two scopes under each other at the same moment: one move wins, the other sees the
result and is refused as a cycle; the tree stays a tree."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from governance.errors import PermissionDenied
from governance.models import Role, Scope
from governance.permissions import MOVE_INTO_ITSELF
from governance.services.principal import grant_add, user_ensure
from governance.services.scope import scope_ensure
from governance.services.scope_admin import scope_move


@pytest.mark.django_db(transaction=True)
def test_opposite_moves_at_once_never_build_a_cycle():
    root = scope_ensure(path="acme", actor=None)
    a, b = scope_ensure(path="acme/a", actor=None), scope_ensure(path="acme/b", actor=None)
    owner = user_ensure(username="olivia", actor=None)
    grant_add(principal=owner, scope=root, role=Role.OWNER, actor=None)
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def move(scope, parent):
        try:
            barrier.wait(timeout=10)
            scope_move(scope=scope, new_parent=parent, actor=owner)
            outcomes.append("moved")
        except PermissionDenied as exc:
            outcomes.append(exc.message)
        finally:
            connection.close()

    threads = [threading.Thread(target=move, args=(a, b)), threading.Thread(target=move, args=(b, a))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(outcomes) == sorted(["moved", MOVE_INTO_ITSELF])
    paths = set(Scope.objects.values_list("path", flat=True))
    assert paths in ({"acme", "acme/b", "acme/b/a"}, {"acme", "acme/a", "acme/a/b"})
    for scope in Scope.objects.all():  # every tree is its parent's tree plus its own id
        expected = f"{scope.parent.tree}.{scope.pk}" if scope.parent_id else str(scope.pk)
        assert scope.tree == expected and (
            scope.parent_id is None or scope.path.startswith(scope.parent.path + "/")
        )
