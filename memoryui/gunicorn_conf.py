"""gunicorn's settings for the web processes: `gunicorn -c python:memoryui.gunicorn_conf memoryui.wsgi:application`
(runstack and devtools/topology.py start it so; docs/operations.md, "Restarts without failed requests").

A worker that stops (a HUP to the master reloads every worker, `--max-requests` recycles one, a SIGTERM) stops
accepting, finishes what it is serving within `graceful_timeout` and answers a request that arrives on a
kept-alive connection meanwhile with `Connection: close`, so a graceful restart fails no request. Only a
worker killed outright (SIGKILL, the OOM killer) loses the requests it was serving. Options given on the
command line win over these."""

from memoryui.settings.env import env_int

wsgi_app = "memoryui.wsgi:application"
worker_class = "gthread"  # threads: a request waiting on PostgreSQL does not hold the process
workers = env_int("WEB_WORKERS", 2)
threads = env_int("WEB_THREADS", 4)
# Longer than the slowest request (a context packet's p99 is about a second under load), so a graceful
# stop never cuts one; a worker silent for `timeout` is killed and replaced.
graceful_timeout = env_int("WEB_GRACEFUL_TIMEOUT", 30)
timeout = env_int("WEB_TIMEOUT", 60)
# gunicorn's default: fewer idle client connections die with a worker killed outright than with a longer one.
keepalive = env_int("WEB_KEEPALIVE", 2)
# Recycle a worker after this many requests (0: never), spread by the jitter so they do not all restart at once.
max_requests = env_int("WEB_MAX_REQUESTS", 0)
max_requests_jitter = env_int("WEB_MAX_REQUESTS_JITTER", 0)
# Invitation and password-reset tokens out of gunicorn's own access and error lines (memoryui/ops/gunicorn_logging.py).
logger_class = "memoryui.ops.gunicorn_logging.RedactingLogger"
# No preload: the application (and its embedder, which hangs in a forked child) is loaded in each worker.
preload_app = False
