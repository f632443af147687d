"""Local development (`make run`, `manage.py …`): DEBUG on. On the embedded stack (no DATABASE_URL or
REDIS_URL) the signing key is this installation's own, generated once under var/; with external servers,
SECRET_KEY must be given like anywhere else. There is no fixed key to fall back on."""

import os

from memoryui.settings.env import env_required

if not os.environ.get("SECRET_KEY"):
    if os.environ.get("DATABASE_URL") or os.environ.get("REDIS_URL"):
        env_required("SECRET_KEY")  # external servers: this may be a real deployment; fail loudly
    from memoryui import embedded

    os.environ["SECRET_KEY"] = embedded.secret_key()
os.environ.setdefault("DEBUG", "true")
os.environ.setdefault("LOG_FORMAT", "text")  # readable in a terminal; production logs JSON

from memoryui.settings.base import *  # noqa: E402,F403
