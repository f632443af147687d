"""Who may do what where: the one place the API, the dashboard, the selectors and the services ask.

A principal holds the grants given to it and to the groups it belongs to. A grant on a scope covers
that scope's whole subtree. Each action names the roles that allow it; nothing else decides.

A request made with an API token acts with the smaller of the token's bound (a scope subtree and a
highest role, fixed at issue) and its principal's grants as they are now: the authentication attaches
the bound to the principal object (`TokenBound`), and every function here applies it. So a grant added
after the token was issued never widens what the token may do, and a grant taken away narrows it at once.

The package: `roles` (actions, the roles that allow them, ranks), `bounds` (a token's bound), `access`
(usable roles, decisions, the scope sets), `review` (four-eyes), `objects` (audit check, principals,
tokens, outbox rows), `owners` (no scope is left without an owner), `guidance` (the menu sections a principal has, what
it can do where and whom to ask), `resolve` (every
name or id from a request to its object, within the caller's workspace), `scopes` (administering the tree: workspaces,
rename/move/archive, scope settings, agent write policy, child scopes). Import from `governance.permissions`.

Three sets of scopes, each with its own name:
- `reading_scope_ids(p, scope)`: what a read *in* `scope` sees: the scope and its ancestors;
- `governed_scopes(p)`: the subtrees of p's grants: where it acts, and what lists and dashboards show
  (turns, grants, audit, outbox, review queue); `forget_reach(p, scope)` is its part a forget in
  `scope` may rewrite;
- `memory_readable_scopes(p)`: the governed subtrees and every scope above them: the memories a caller
  may read by id or in a list (an ancestor's memory is part of what a read in its subtree sees)."""

from __future__ import annotations

from governance.permissions.access import (  # noqa: F401
    GRANT_ABOVE_OWN,
    MatrixCell,
    RoleMap,
    ScopeAccess,
    can,
    can_grant,
    can_read_memory,
    deciding_scopes,
    effective_grants,
    forget_reach,
    governed_roots,
    governed_scopes,
    grants_for,
    memory_readable_scopes,
    memory_texts_readable,
    reading_scope_ids,
    require,
    require_grant,
    require_roles,
    role_matrix,
    roles_at,
    scope_access,
    turn_readable_scopes,
)
from governance.permissions.bounds import (  # noqa: F401
    TokenBound,
    bind_token,
    bound_of,
    under,
)
from governance.permissions.guidance import (  # noqa: F401
    CAN_DO,
    NO_GRANT,
    READING,
    Standing,
    holders,
    menu_sections,
    standings,
)
from governance.permissions.objects import (  # noqa: F401
    AUDIT_VERIFY_DENIED,
    GROUP_MANAGE_DENIED,
    TEAM_CREATE_DENIED,
    TOKEN_ISSUE_DENIED,
    TOKEN_REVOKE_DENIED,
    can_create_team,
    can_issue_token,
    can_manage_principal,
    can_manage_webhooks,
    can_revoke_token,
    can_start_evaluation,
    can_verify_audit,
    evaluation_roots,
    evaluation_workspace_ids,
    outbox_for_reader,
    outbox_scopes,
    owned_workspaces,
    require_evaluation_start,
    require_manage_webhooks,
    require_outbox_read,
    require_verify_audit,
    tokens_visible_to,
    webhook_workspaces,
)
from governance.permissions.owners import (  # noqa: F401
    LAST_OWNER,
    lock_owner_grants,
    owner_left,
    revoke_leaves_no_owner,
)
from governance.permissions.resolve import (  # noqa: F401
    UNKNOWN_PRINCIPAL,
    acting_workspace_ids,
    clean_path,
    dispute_for_reader,
    grant_for_reader,
    is_member,
    member_by_name,
    member_workspace_ids,
    memory_for_reader,
    nearest_scope,
    principal_by_name,
    principal_visible,
    principals_visible_to,
    scope_by_id,
    scope_by_path,
    team_by_name,
    turn_for_reader,
    workspace_by_slug,
    workspace_root,
    workspace_roots,
)
from governance.permissions.review import (  # noqa: F401
    approvals_needed,
    approvers,
    confirm_approvals_needed,
    confirmations_needed,
    ending_needs_two_people,
    four_eyes_scopes,
    four_eyes_trees,
    puts_in_force,
    requires_four_eyes,
    who_decides,
)
from governance.permissions.roles import (  # noqa: F401
    ACTION_ROLES,
    AGENT_MAX_ROLE,
    DENIAL_REASONS,
    PERMISSION_WORDS,
    Action,
    agent_may_hold,
    highest_rank,
    may_grant_role,
    role_permissions,
    role_rank,
    roles_up_to,
)
from governance.permissions.scopes import (  # noqa: F401
    AGENT_WRITE_EPISODES,
    AGENT_WRITE_NONE,
    ARCHIVE_ROOT,
    FOUR_EYES_OFF_REASON,
    MOVE_ACROSS_WORKSPACES,
    MOVE_INTO_ITSELF,
    MOVE_ROOT,
    SCOPE_CREATE_DENIED,
    WORKSPACE_ADMIN_DENIED,
    WORKSPACE_CREATE_DENIED,
    agent_write_policy,
    archived_scope,
    child_scope_lowest_role,
    child_scope_roles,
    is_site_admin,
    may_write_candidates,
    require_administer,
    require_create_child_scope,
    require_four_eyes_change,
    require_move,
    require_workspace_admin,
    require_workspace_create,
    require_writable,
    settings_kept_on_move,
)
