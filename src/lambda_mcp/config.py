"""`Settings`: the kit's configuration, read once from `LAMBDA_MCP_*` environment variables.

Every value is parsed and checked when it is read: a bad one raises `ConfigError` naming the
variable, never a bare `ValueError` from deep inside the kit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import field, replace
from typing import Literal, cast
from urllib.parse import urlsplit

from .env_reader import PREFIX, ConfigError, _Reader, _split
from .protocol.values import lean_dataclass

__all__ = ["PREFIX", "ConfigError", "Settings"]
AuthMode = Literal["none", "jwt", "gateway", "proxy"]
AUTH_MODES: tuple[AuthMode, ...] = ("none", "jwt", "gateway", "proxy")
TaskBackend = Literal["sqs", "durable"]
DpopMode = Literal["off", "optional", "required"]


def _conditions(value: str | None) -> tuple[tuple[str, str], ...]:
    """`hd=example.com,email_verified=true` as (claim, value) pairs."""
    pairs = []
    for part in _split(value):
        claim, equals, wanted = part.partition("=")
        if not equals or not claim.strip() or not wanted.strip():
            raise ConfigError(
                f"{PREFIX}AUTH_UPSTREAM_REQUIRE must be comma-separated claim=value conditions"
                f" (hd=example.com,email_verified=true), not {part!r}"
            )
        pairs.append((claim.strip(), wanted.strip()))
    return tuple(pairs)


@lean_dataclass(frozen=True)  # a frozen dataclass, its methods not compiled per class (protocol/values.py)
class Settings:
    """Every setting of the kit, read once from the environment (`Settings.from_env`)."""

    app: str | None = None
    """`path/to/file.py:app` or `module:app`: the user's MCPApp."""
    allowed_hosts: tuple[str, ...] = ()
    """Extra Host header patterns (`api.example.com`, `*.example.com`, `127.0.0.1:*`)."""
    allowed_origins: tuple[str, ...] = ()
    """Allowed Origin header patterns (`https://app.example.com`); requests without Origin are allowed."""
    trust_event_domain: bool = True
    """In Lambda, also allow the API Gateway / Function URL domain the event arrived on."""
    state_key: bytes | None = None
    """Key sealing MRTR `requestState`; shared by every instance (never generated per process in Lambda)."""
    state_key_secret: str | None = None
    """Secrets Manager secret (ARN or name) holding that key, read at run time and cached for 5 minutes
    (so a rotation needs no redeploy); used when `state_key` is not set."""
    session_ttl_seconds: float = 3600.0
    session_touch_seconds: float = 300.0
    """A live session's expiry slides at most once per this interval."""
    session_cache_seconds: float = 1.0
    """The streaming server reuses a session record it read this recently (0: read it on every request);
    a change made by another process is seen within this time. The buffered transport never caches."""
    max_body_bytes: int = 1_048_576
    retry_ms: int = 1000
    """`retry:` sent before the server closes a legacy SSE stream for polling."""
    server_request_timeout_seconds: float = 300.0
    max_wait_seconds: float = 25.0
    """Longest a buffered response waits (legacy `tasks/result`) before ending for the client to resume;
    also bounded by the Lambda invocation's remaining time."""
    get_stream: bool = True
    """Buffered transport: serve the legacy GET stream (polled); False answers GET with 405."""
    get_stream_seconds: float = 0.0
    """Buffered transport: how long a legacy GET stream waits for the first change before ending with
    `retry:` (0: it answers at once with what changed since the client's last poll)."""
    listen_hold_seconds: float = 0.0
    """Buffered transport: how long a 2026 `subscriptions/listen` response waits for a change before
    closing (0: the acknowledgement and a graceful close at once; the client listens again)."""
    table_name: str | None = None
    """DynamoDB state table; when set, sessions and stream events live there instead of in memory."""
    shards: int = 1
    """Partitions the change feed and the sweeper's due index are spread over (each takes ~1,000 writes/s;
    readers query every shard). Raising it is safe at any time; lowering it strands entries of the shards
    dropped (change entries live an hour; tasks in the due index until they finish)."""
    task_queue_url: str | None = None
    """SQS queue of the task worker; when set (in Lambda), tasks are offered and run on the worker.
    Unset in Lambda: tasks are not offered (`lambda-mcp dev` runs them in-process instead)."""
    task_backend: TaskBackend = "sqs"
    """Where tasks run in Lambda: `sqs` (the worker behind the task queue, `TASK_QUEUE_URL`) or `durable` (each
    task a Lambda durable execution of `TASK_DURABLE_FUNCTION`, tasks/durable.py)."""
    task_durable_function: str | None = None
    """`durable`: the durable task worker's alias ARN (`arn:aws:lambda:…:function:NAME:live`), which a task's
    execution is started on."""
    task_dead_letter_arn: str | None = None
    """ARN of the task queue's dead-letter queue: the worker fails tasks whose messages arrive from it."""
    task_max_attempts: int = 3
    """Worker runs started for one task before the sweeper gives up and fails it."""
    task_max_ttl_seconds: float = 86_400.0
    """Cap on a task's lifetime (clients may ask for less)."""
    task_worker_timeout_seconds: float = 900.0
    """The task worker function's timeout: a run's lease lasts about this long (template: 900)."""
    task_sweep_seconds: float = 300.0
    """How often the sweeper runs (template: `rate(5 minutes)`). With the worker's timeout and the attempts,
    it sets the shortest task lifetime: every attempt may take a lease and wait a sweep."""
    skip_waits: bool = False
    """Time skipping, local only (`lambda-mcp dev`, the test client): `ctx.sleep` waits for nothing."""
    auth: AuthMode = "none"
    """Who may call: `none` (anyone), `jwt` (the kit validates bearer tokens), `proxy` (the kit validates
    the tokens its own authorization facade issues), `gateway` (API Gateway or a Function URL
    authenticated the caller: JWT, Lambda or IAM authorizer)."""
    auth_issuer: str | None = None
    """`jwt`: the authorization server (its metadata names the JWKS); also the one listed in the
    protected resource metadata (any mode). `proxy`: always the facade itself (derived from the resource)."""
    auth_jwks_url: str | None = None
    """`jwt`: the JWKS URL, when the issuer publishes no metadata."""
    auth_audience: str | None = None
    """`jwt`: the audience tokens must carry; default the server's canonical URL (RFC 8707 resource)."""
    auth_scopes: tuple[str, ...] = ()
    """Scopes every request needs (`jwt`, `gateway`)."""
    auth_cognito_client_ids: tuple[str, ...] = ()
    """`jwt` with Amazon Cognito: app client ids whose access tokens (no `aud`; `client_id`,
    `token_use=access`) are accepted."""
    auth_token_type: str | None = None
    """`jwt`: the `typ` a token's header must carry (`at+jwt`, RFC 9068); unset: not checked (Cognito's
    access tokens carry none)."""
    auth_upstream_issuer: str | None = None
    """`proxy`: the upstream OpenID provider the authorization facade signs users in with."""
    auth_upstream_client_id: str | None = None
    """`proxy`: the facade's own client, pre-registered at the upstream (its redirect URI: `<base>/oauth/callback`)."""
    auth_upstream_client_secret: str | None = None
    """`proxy`: that client's secret in plain text (local work and tests; unset for a public client)."""
    auth_upstream_client_secret_arn: str | None = None
    """`proxy`: a Secrets Manager secret (ARN or name) holding that client's secret, read at run time."""
    auth_signing_key_id: str | None = None
    """`proxy`: the KMS key (id, ARN or alias; asymmetric ECC_NIST_P256) that signs the facade's tokens."""
    auth_signing_key: str | None = None
    """`proxy`: a PEM EC P-256 private key signing the facade's tokens (local work and tests only)."""
    auth_upstream_check_seconds: float = 3600.0
    """`proxy`: a refresh at the facade refreshes at the upstream too when its last check is older than this
    (0: on every refresh), so a user the upstream disabled loses access."""
    auth_idle_seconds: float = 14 * 86_400.0
    """`proxy`: a sign-in (its refresh-token family) ends when it is not refreshed for this long."""
    auth_upstream_require: tuple[tuple[str, str], ...] = ()
    """`proxy`: `claim=value` conditions the upstream identity must meet to sign in (all of them)."""
    auth_upstream_claims: tuple[str, ...] = ()
    """`proxy`: upstream identity claims copied into the facade's access tokens (`ctx.claims`)."""
    auth_clients: str | None = None
    """`proxy`: operator-registered clients (`facade.registered`): inline JSON, `file:`, `ssm:` or `secretsmanager:`."""
    auth_trusted_issuers: tuple[str, ...] = ()
    """`proxy`: enterprise identity providers whose ID-JAGs the facade accepts (jwt-bearer grant)."""
    auth_dpop: DpopMode = "optional"
    """`proxy`: DPoP (RFC 9449): `off`, `optional` (a proof binds the token), `required` (every token bound)."""
    auth_dpop_nonce: bool = False
    """`proxy`: DPoP proofs must carry a server nonce (`DPoP-Nonce`), at the token endpoint and `/mcp`."""
    auth_token_key_id: str | None = None
    """`proxy`: the KMS key sealing users' tokens at other services (connections); unset: the state key."""
    resource_url: str | None = None
    """The server's canonical URL (`https://mcp.example.com/mcp`); default: derived from each request."""
    metrics_namespace: str = "lambda-mcp"
    """CloudWatch namespace of the metrics the Lambda functions emit (EMF)."""
    tracing: bool = False
    """Lambda: trace with AWS X-Ray through Powertools Tracer (needs aws-xray-sdk in the layer)."""
    extra: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, default_auth: AuthMode | None = None) -> Settings:
        """Read the settings; `default_auth` is the auth mode when `LAMBDA_MCP_AUTH` is unset (None: it
        must be set, as in Lambda, where an open endpoint must be chosen explicitly)."""
        env = _Reader(os.environ if environ is None else environ)
        key = env.text("STATE_KEY")
        settings = cls(
            app=env.text("APP"),
            allowed_hosts=_split(env.text("ALLOWED_HOSTS")),
            allowed_origins=_split(env.text("ALLOWED_ORIGINS")),
            trust_event_domain=env.flag("TRUST_EVENT_DOMAIN", True),
            state_key=key.encode() if key else None,
            state_key_secret=env.text("STATE_KEY_SECRET"),
            session_ttl_seconds=env.number("SESSION_TTL_SECONDS", 3600, minimum=1),
            session_touch_seconds=env.number("SESSION_TOUCH_SECONDS", 300),
            session_cache_seconds=env.number("SESSION_CACHE_SECONDS", 1.0),
            max_body_bytes=env.integer("MAX_BODY_BYTES", 1_048_576, minimum=1),
            retry_ms=env.integer("RETRY_MS", 1000),
            max_wait_seconds=env.number("MAX_WAIT_SECONDS", 25),
            get_stream=env.flag("GET_STREAM", True),
            get_stream_seconds=env.number("GET_STREAM_SECONDS", 0),
            listen_hold_seconds=env.number("LISTEN_HOLD_SECONDS", 0),
            table_name=env.text("TABLE_NAME"),
            shards=env.integer("SHARDS", 1, minimum=1),
            task_queue_url=env.text("TASK_QUEUE_URL"),
            task_backend=_task_backend(env.text("TASK_BACKEND")),
            task_durable_function=env.text("TASK_DURABLE_FUNCTION"),
            task_dead_letter_arn=env.text("TASK_DLQ_ARN"),
            task_max_attempts=env.integer("TASK_MAX_ATTEMPTS", 3, minimum=1),
            task_max_ttl_seconds=env.number("TASK_MAX_TTL_SECONDS", 86_400, minimum=1),
            task_worker_timeout_seconds=env.number("TASK_WORKER_TIMEOUT_SECONDS", 900, minimum=1),
            task_sweep_seconds=env.number("TASK_SWEEP_SECONDS", 300, minimum=1),
            skip_waits=env.flag("SKIP_WAITS", False),
            auth=_auth_mode(env.text("AUTH"), default_auth),
            auth_issuer=env.text("AUTH_ISSUER"),
            auth_jwks_url=env.text("AUTH_JWKS_URL"),
            auth_audience=env.text("AUTH_AUDIENCE"),
            auth_scopes=tuple((env.text("AUTH_SCOPES") or "").replace(",", " ").split()),
            auth_cognito_client_ids=_split(env.text("AUTH_COGNITO_CLIENT_IDS")),
            auth_token_type=env.text("AUTH_TOKEN_TYPE"),
            auth_upstream_issuer=env.text("AUTH_UPSTREAM_ISSUER"),
            auth_upstream_client_id=env.text("AUTH_UPSTREAM_CLIENT_ID"),
            auth_upstream_client_secret=env.text("AUTH_UPSTREAM_CLIENT_SECRET"),
            auth_upstream_client_secret_arn=env.text("AUTH_UPSTREAM_CLIENT_SECRET_ARN"),
            auth_signing_key_id=env.text("AUTH_SIGNING_KEY_ID"),
            auth_signing_key=env.text("AUTH_SIGNING_KEY"),
            auth_upstream_check_seconds=env.number("AUTH_UPSTREAM_CHECK_SECONDS", 3600),
            auth_idle_seconds=env.number("AUTH_IDLE_SECONDS", 14 * 86_400, minimum=60),
            auth_upstream_require=_conditions(env.text("AUTH_UPSTREAM_REQUIRE")),
            auth_upstream_claims=_split(env.text("AUTH_UPSTREAM_CLAIMS")),
            auth_clients=env.text("AUTH_CLIENTS"),
            auth_trusted_issuers=_split(env.text("AUTH_TRUSTED_ISSUERS")),
            auth_dpop=cast(DpopMode, env.choice("AUTH_DPOP", ("off", "optional", "required"), "optional")),
            auth_dpop_nonce=env.flag("AUTH_DPOP_NONCE", False),
            auth_token_key_id=env.text("AUTH_TOKEN_KEY_ID"),
            resource_url=env.text("RESOURCE_URL"),
            metrics_namespace=env.text("METRICS_NAMESPACE") or "lambda-mcp",
            tracing=env.flag("TRACING", False),
        )
        if settings.auth == "proxy":  # the facade is the issuer clients see (the upstream: AUTH_UPSTREAM_ISSUER)
            settings = replace(settings, auth_issuer=facade_issuer(settings))
        settings.check()
        refuse_dev_sign_in(settings, env.env)
        return settings

    @property
    def proxy_resource(self) -> str | None:
        """`proxy`: the MCP resource the facade issues tokens for (`AUTH_AUDIENCE`, else `RESOURCE_URL`)."""
        return self.auth_audience or self.resource_url

    def check(self) -> None:
        """Raise `ConfigError` for combinations that cannot work (checked once, at start-up): every missing
        setting of the auth mode in one message."""
        if self.auth in ("jwt", "proxy"):
            require_auth_packages(self.auth)
        problems = self._proxy_problems() if self.auth == "proxy" else []
        if self.auth == "jwt" and not self.auth_issuer:
            problems.append(f"{PREFIX}AUTH=jwt needs {PREFIX}AUTH_ISSUER (the authorization server's issuer URL)")
        for name, url in (
            ("AUTH_ISSUER", None if self.auth == "proxy" else self.auth_issuer),
            ("AUTH_UPSTREAM_ISSUER", self.auth_upstream_issuer),
            ("AUTH_JWKS_URL", self.auth_jwks_url),
            ("RESOURCE_URL", self.resource_url),
            *(("AUTH_TRUSTED_ISSUERS", issuer) for issuer in self.auth_trusted_issuers),
        ):
            if url is not None and not secure_url(url):
                problems.append(f"{PREFIX}{name} must be an https:// URL (http:// only on loopback), not {url!r}")
        if self.task_backend == "durable" and not self.task_durable_function:
            problems.append(
                f"{PREFIX}TASK_BACKEND=durable needs {PREFIX}TASK_DURABLE_FUNCTION (the durable task worker's"
                " alias ARN, arn:aws:lambda:REGION:ACCOUNT:function:NAME:live; template.yaml sets it)"
            )
        if problems:
            raise ConfigError("; ".join(problems))

    def _proxy_problems(self) -> list[str]:
        """What keeps the facade from starting: every setting it lacks (named together, in one message),
        then each value it cannot use."""
        missing = []
        resource = self.proxy_resource
        if not resource or urlsplit(resource).scheme not in ("http", "https"):
            missing.append(f"{PREFIX}AUTH_AUDIENCE (the MCP endpoint's URL, https://mcp.example.com/mcp)")
        if not self.auth_upstream_issuer:
            missing.append(f"{PREFIX}AUTH_UPSTREAM_ISSUER (the OpenID provider users sign in with)")
        if not self.auth_upstream_client_id:
            missing.append(f"{PREFIX}AUTH_UPSTREAM_CLIENT_ID (the facade's client registered at the upstream)")
        if bool(self.auth_signing_key) == bool(self.auth_signing_key_id):
            missing.append(
                f"exactly one of {PREFIX}AUTH_SIGNING_KEY_ID (a KMS ECC_NIST_P256 signing key) or"
                f" {PREFIX}AUTH_SIGNING_KEY (a PEM EC P-256 private key, for local work)"
            )
        locally = "locally, `lambda-mcp dev` derives the audience and a signing key, and signs users in itself"
        needs = f"{PREFIX}AUTH=proxy needs {', '.join(missing)}; {locally} when no AUTH_UPSTREAM_* setting is given"
        problems = [needs] if missing else []
        audience, secret = self.auth_audience, f"{PREFIX}AUTH_UPSTREAM_CLIENT_SECRET"
        if audience and urlsplit(audience).scheme in ("http", "https") and not secure_url(audience):
            problems.append(
                f"{PREFIX}AUTH_AUDIENCE must be an https:// URL (http:// only on loopback), not {audience!r}"
            )
        if self.auth_upstream_client_secret and self.auth_upstream_client_secret_arn:
            problems.append(f"set {secret} or {secret}_ARN, not both")
        return problems


def facade_issuer(settings: Settings) -> str:
    """`proxy`: the facade's issuer, the MCP resource URL without its last path segment (`/mcp`): the
    origin, or the origin and a REST API's stage."""
    resource = settings.proxy_resource or ""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/").rsplit("/", 1)[0] if parts.path.rstrip("/") else ""
    return f"{parts.scheme}://{parts.netloc}{path}"


def require_auth_choice(environ: Mapping[str, str] | None = None) -> None:
    """Raise `ConfigError` unless `LAMBDA_MCP_AUTH` is set: a deployed endpoint is open only by choice."""
    _auth_mode(_Reader(os.environ if environ is None else environ).text("AUTH"), None)


def _task_backend(raw: str | None) -> TaskBackend:
    if raw is None or raw.lower() == "sqs":
        return "sqs"
    if raw.lower() == "durable":
        return "durable"
    raise ConfigError(f"{PREFIX}TASK_BACKEND must be sqs or durable, not {raw!r}")


def _auth_mode(raw: str | None, default: AuthMode | None) -> AuthMode:
    if raw is None:
        if default is None:
            raise ConfigError(
                f"{PREFIX}AUTH is not set: choose jwt (the kit validates OAuth bearer tokens), proxy (the kit"
                " serves an OAuth authorization server in front of an OpenID provider), gateway (API Gateway or a"
                " Function URL authenticates: JWT, Lambda or IAM authorizer) or none (a public endpoint anyone"
                " may call)"
            )
        return default
    for mode in AUTH_MODES:
        if raw.lower() == mode:
            return mode
    template = TEMPLATE_MODES.get(raw.lower())
    if template is not None:
        raise ConfigError(f"{PREFIX}AUTH={raw} is the template's AuthMode, not a setting: {template}")
    raise ConfigError(f"{PREFIX}AUTH must be one of {', '.join(AUTH_MODES)}, not {raw!r}")


TEMPLATE_MODES = {
    "cognito": f"AuthMode=cognito runs the authorization facade ({PREFIX}AUTH=proxy) in front of the stack's user"
    f" pool; locally use {PREFIX}AUTH=proxy (`lambda-mcp dev` then signs users in itself)",
    "cognito-direct": f"AuthMode=cognito-direct is {PREFIX}AUTH=jwt with the user pool as {PREFIX}AUTH_ISSUER;"
    f" locally use {PREFIX}AUTH=jwt, or proxy (`lambda-mcp dev` then signs users in itself)",
    "iam": f"AuthMode=iam is {PREFIX}AUTH=gateway (the front door checks the IAM signature); locally use"
    " `lambda-mcp dev --lambda --iam-caller ARN`",
}
"""The template's `AuthMode` values that are no `LAMBDA_MCP_AUTH` value, and what they are."""


def require_auth_packages(mode: str) -> None:
    """Raise `ConfigError` naming the extra to install when auth `mode` (jwt, proxy) lacks PyJWT or
    cryptography: at start-up, not as a 500 on the first request. Looked up, not imported."""
    from importlib.util import find_spec

    missing = []
    for name, package in (("jwt", "PyJWT"), ("cryptography", "cryptography")):
        try:
            found = find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        missing += [] if found else [package]
    if missing:
        are = "is" if len(missing) == 1 else "are"
        install = "pip install 'lambda-mcp[auth]'"
        raise ConfigError(f"{PREFIX}AUTH={mode} needs {' and '.join(missing)}, which {are} not installed: {install}")


DEV_SIGN_IN_PATH = "/_dev/idp"
"""Where `lambda-mcp dev` serves its development sign-in (local/idp.py), on its own port."""


def refuse_dev_sign_in(settings: Settings, environ: Mapping[str, str]) -> None:
    """In Lambda (which sets `AWS_LAMBDA_FUNCTION_NAME`; `lambda-mcp dev` never does), an upstream issuer
    naming `lambda-mcp dev`'s development sign-in, which accepts any username, is refused."""
    issuer = (settings.auth_upstream_issuer or "").rstrip("/")
    lambda_env = environ.get("AWS_LAMBDA_FUNCTION_NAME") or environ.get("AWS_LAMBDA_RUNTIME_API")
    if settings.auth == "proxy" and issuer.endswith(DEV_SIGN_IN_PATH) and lambda_env:
        raise ConfigError(
            f"{PREFIX}AUTH_UPSTREAM_ISSUER names lambda-mcp dev's development sign-in ({issuer}), which never runs"
            " in Lambda: name your OpenID provider"
        )


LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})


def secure_url(url: str) -> bool:
    """`https://…`, or `http://` to a loopback host (local work only)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    if not parts.netloc:
        return False
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and (parts.hostname or "") in LOOPBACK_NAMES
