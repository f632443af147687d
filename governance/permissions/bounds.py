"""What a token was issued for, carried on the principal object of the request it authenticates."""

from __future__ import annotations

from dataclasses import dataclass

from governance.models import ApiToken, Principal
from governance.permissions.roles import roles_up_to


def under(tree: str, root: str) -> bool:
    """Whether ltree `tree` is `root` or lies below it."""
    tree, root = str(tree), str(root)
    return tree == root or tree.startswith(root + ".")


@dataclass(frozen=True)
class TokenBound:
    """What a token was issued for: the subtree of the scope with ltree `tree`, roles up to `max_role`."""

    tree: str
    max_role: str
    path: str = ""  # the bound scope's path (for audit-log filtering by path)

    @property
    def roles(self) -> frozenset[str]:
        return roles_up_to(self.max_role)

    def clip(self, grant_tree: str, role: str) -> str | None:
        """The part of a grant the token may use: the deeper of the grant's and the bound's scope when
        one lies inside the other and the role is within the cap; None when nothing is left."""
        if role not in self.roles:
            return None
        if under(grant_tree, self.tree):
            return str(grant_tree)
        if under(self.tree, grant_tree):
            return self.tree
        return None


def bound_of(principal: Principal | None) -> TokenBound | None:
    """The bound of the token the principal is acting with (None: a signed-in person, or no bound)."""
    return getattr(principal, "token_bound", None)


def bind_token(
    principal: Principal, token: ApiToken, scope_tree: str | None, scope_path: str = ""
) -> Principal:
    """Attach `token`'s bound to the principal object it authenticates (called once per request)."""
    principal.token_bound = (
        TokenBound(str(scope_tree), token.max_role, scope_path) if token.scope_id else None
    )
    return principal
