"""Production: everything from the environment; SECRET_KEY, DATABASE_URL and REDIS_URL must be set.
HTTPS only by default (redirect, HSTS, secure cookies); each can be turned off for a deployment that
terminates TLS in a way Django cannot see. docs/operations.md, "Production security settings"."""

from memoryui.settings.env import env_required

env_required("SECRET_KEY")
env_required("DATABASE_URL")
env_required("REDIS_URL")

from memoryui.settings.base import *  # noqa: E402,F403
from memoryui.settings.env import env_bool, env_int, env_list  # noqa: E402

DEBUG = env_bool("DEBUG", False)

SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", True)
# The proxy in front terminates TLS and says so in X-Forwarded-Proto (it must overwrite what clients send).
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
# Paths served over plain HTTP too (regexes without the leading slash), e.g. a load balancer's probe.
SECURE_REDIRECT_EXEMPT = env_list("SECURE_REDIRECT_EXEMPT", [])
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)  # one year; 0 turns HSTS off
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
