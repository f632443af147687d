"""Local development (the `make run` command): DEBUG on and a fixed key, never used in production."""

import os

os.environ.setdefault("SECRET_KEY", "dev-only-insecure-key-do-not-deploy")
os.environ.setdefault("DEBUG", "true")

from memoryui.settings.base import *  # noqa: E402,F403
