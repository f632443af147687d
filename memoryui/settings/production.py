"""Production: everything from the environment; SECRET_KEY, DATABASE_URL and REDIS_URL must be set."""

from memoryui.settings.env import env_required

env_required("DATABASE_URL")
env_required("REDIS_URL")

from memoryui.settings.base import *  # noqa: E402,F403
from memoryui.settings.env import env_bool  # noqa: E402

SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
