"""Local development (`make run`, `manage.py …`): DEBUG on, the `devtools` app installed, and the embedded
PostgreSQL and Redis under var/ started (or found running) for each of DATABASE_URL / REDIS_URL left unset.
On the embedded stack the signing key is this installation's own, generated once under var/; with external
servers, SECRET_KEY must be given like anywhere else. There is no fixed key to fall back on."""

import os

from memoryui.settings.env import env_int, env_required

if not os.environ.get("SECRET_KEY"):
    if os.environ.get("DATABASE_URL") or os.environ.get("REDIS_URL"):
        env_required("SECRET_KEY")  # external servers: this may be a real deployment; fail loudly
    from devtools import embedded

    os.environ["SECRET_KEY"] = embedded.secret_key()
os.environ.setdefault("DEBUG", "true")
os.environ.setdefault("LOG_FORMAT", "text")  # readable in a terminal; production logs JSON

from devtools.embedded import store_urls  # noqa: E402

# Given to the base settings only while they load: a child process (runstack's workers) gets the URLs
# from its parent explicitly, and `runstack` tells the servers it owns by the URLs the environment left unset.
_EMBEDDED = store_urls(env_int("REDIS_DB", 0))
os.environ.update(_EMBEDDED)
try:
    from memoryui.settings.base import *  # noqa: E402,F403
    from memoryui.settings.base import INSTALLED_APPS  # noqa: E402
finally:
    for _name in _EMBEDDED:
        del os.environ[_name]

INSTALLED_APPS = [*INSTALLED_APPS, "devtools"]
