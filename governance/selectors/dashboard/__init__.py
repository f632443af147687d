"""Reads for the dashboard. Every function takes the acting principal and only returns what its grants
allow (the subtrees of its grants, as governance.permissions.governed_scopes says); list functions run a
fixed number of queries whatever the number of rows (tested with django_assert_max_num_queries)."""

from governance.selectors.dashboard.activity import *  # noqa: F403
from governance.selectors.dashboard.audit import *  # noqa: F403
from governance.selectors.dashboard.common import *  # noqa: F403
from governance.selectors.dashboard.common import BAD_PAGE, MAX_PAGE_SIZE, PAGE_SIZE  # noqa: F401
from governance.selectors.dashboard.drops import *  # noqa: F403
from governance.selectors.dashboard.graph import *  # noqa: F403
from governance.selectors.dashboard.memories import *  # noqa: F403
from governance.selectors.dashboard.memory_list import *  # noqa: F403
from governance.selectors.dashboard.timeline import *  # noqa: F403
from governance.selectors.dashboard.turn_search import *  # noqa: F403
