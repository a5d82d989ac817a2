"""Where the fuzzer sends: the Lambda handler fed API Gateway events and the streaming server over ASGI,
each on in-memory stores wrapped to audit every storage key against DynamoDB's limits; what an
exchange looked like (`Outcome`), and the stored state before and after it."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import inspect
import json
import logging
import re
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jwt
from mangum import Mangum
from starlette.types import ASGIApp, Receive, Scope, Send

from lambda_mcp.config import Settings
from lambda_mcp.kit import Kit, build_kit
from lambda_mcp.loader import load_app
from lambda_mcp.local.context import LambdaContext
from lambda_mcp.local.gateways import http_api_event
from lambda_mcp.protocol.ids import parse_event_id
from lambda_mcp.storage.dynamodb import keys
from lambda_mcp.storage.memory import InMemoryCallStore, InMemoryChangeLog, InMemoryEventLog, InMemorySessionStore
from lambda_mcp.tasks import InMemoryTaskStore
from tests.support.issuer import LocalIssuer
from tests.support.processes import ROOT
from tests.support.recorder import Recorder

from .auth_probes import Bearer, Token
from .probes import (
    ACCEPT_BOTH,
    CONFORMANCE,
    DOMAIN,
    LEGACY,
    LOCAL_HOST,
    META_CAPABILITIES,
    META_VERSION,
    MODERN,
    Json,
    Probe,
    Raw,
    Ref,
    mangle,
)


# -- what the target sees: the sent request and the answer ------------------------------------
@dataclass
class Outcome:
    status: int | None
    """None: no answer within the timeout."""
    headers: dict[str, str]
    body: bytes
    request_headers: dict[str, str]
    request_body: bytes
    session_version: str | None
    """The revision of the live session the probe named, if it named one."""
    open_stream: bool = False
    """The probe opens a stream that legitimately never ends (a GET stream, a listen)."""
    method: str = "POST"
    elapsed: float = 0.0
    escaped: list[str] = field(default_factory=list)
    logged: list[str] = field(default_factory=list)
    key_problems: list[str] = field(default_factory=list)
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Finding:
    category: str
    detail: str


CATEGORIES = ("5xx", "leak", "schema", "state", "internal", "storage-key", "protocol", "hang", "header")


# -- storage key audit ----------------------------------------------------------------------------
PK_LIMIT = 2048
SK_LIMIT = 1024


class KeyAudit:
    """Collects keys the stores were asked for that DynamoDB would refuse (over-long, empty, not UTF-8)."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def check(self, label: str, key: str, limit: int) -> None:
        try:
            size = len(key.encode("utf-8"))
        except UnicodeEncodeError:
            self.problems.append(f"{label} is not valid UTF-8: {key[:80]!r}")
            return
        if size > limit:
            self.problems.append(f"{label} is {size} bytes (limit {limit}): {key[:80]!r}...")

    def arguments(self, store: str, method: str, bound: dict[str, Any]) -> None:
        """Check the keys one store call would read or write in the single-table design (`keys.py`)."""
        label = f"{store}.{method}"
        for name, value in bound.items():
            if name == "record" and hasattr(value, "__dict__"):
                self.arguments(store, method, dict(vars(value)))
            elif not isinstance(value, str):
                continue
            elif name == "session_id" and store != "tasks":
                self.check(f"{label}: session partition key", keys.session_pk(value), PK_LIMIT)
            elif name == "stream_id" and store == "calls":
                self.check(f"{label}: call sort key", keys.call_sk(value), SK_LIMIT)
            elif name == "stream_id":
                self.check(f"{label}: event sort key", keys.event_sk(value, 1), SK_LIMIT)
            elif name == "event_id" and (parsed := parse_event_id(value)) is not None:
                self.check(f"{label}: event sort key", keys.event_sk(parsed.stream, parsed.seq), SK_LIMIT)
            elif name == "task_id":
                self.check(f"{label}: task partition key", keys.task_pk(value), PK_LIMIT)
            elif name == "owner":
                self.check(f"{label}: owner index key", keys.owner_pk(value), PK_LIMIT)


class Audited:
    """Forwards to an in-memory store, auditing the keys of every coroutine method's arguments."""

    def __init__(self, store: str, inner: Any, audit: KeyAudit) -> None:
        self._store = store
        self._inner = inner
        self._audit = audit

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._inner, name)
        if not inspect.iscoroutinefunction(attribute):
            return attribute
        signature = inspect.signature(attribute)
        audit, store = self._audit, self._store

        async def audited(*args: Any, **kwargs: Any) -> Any:
            with contextlib.suppress(TypeError):
                audit.arguments(store, name, dict(signature.bind(*args, **kwargs).arguments))
            return await attribute(*args, **kwargs)

        return audited


# -- logs and escaped exceptions ------------------------------------------------------------------
class ErrorLog(logging.Handler):
    """Records errors the kit logs with a traceback: an unexpected exception it turned into a reply."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            self.records.append(f"{record.getMessage()}: {type(exc).__name__}: {str(exc)[:200]}")


class Guard:
    """Wraps the ASGI app and records exceptions that escape it (what a server turns into a 500)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.escaped: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except Exception as exc:
            self.escaped.append(f"{type(exc).__name__}: {str(exc)[:200]}")
            raise


# -- targets ------------------------------------------------------------------------------------
OPEN_STREAM_SECONDS = 0.5
"""How long a stream that may never end (the streaming server's GET stream, a listen) is read."""
ANSWER_SECONDS = 8.0
"""How long any other request may take before it counts as a hang."""


class Target:
    """One kit with in-memory state, real sessions of every legacy revision, and a pool of real ids."""

    name = ""
    host = ""
    origin = ""
    kit: Kit
    guard: Guard

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.audit = KeyAudit()
        self.sessions = InMemorySessionStore()
        self.events = InMemoryEventLog()
        self.calls = InMemoryCallStore()
        self.tasks = InMemoryTaskStore()
        self.changes = InMemoryChangeLog()
        self.recorder = Recorder()
        self.errors = ErrorLog()
        logger = logging.getLogger("lambda_mcp")
        logger.addHandler(self.errors)
        if logger.getEffectiveLevel() > logging.ERROR:  # errors must reach the handler
            logger.setLevel(logging.ERROR)
        self.live: dict[str, str] = {}
        self.dead = ""
        self.pools: dict[str, list[str]] = {"event": [], "input": [], "state": [], "task": []}

    def build(self, settings: Settings, *, streaming: bool, local: bool, app_path: Path = CONFORMANCE) -> Kit:
        """The conformance app's kit (or `app_path`'s) on this target's audited in-memory stores (either
        `build_kit` form: `stores=Stores(...)`, or one keyword per store)."""
        stores: dict[str, Any] = {
            "sessions": Audited("sessions", self.sessions, self.audit),
            "events": Audited("events", self.events, self.audit),
            "calls": Audited("calls", self.calls, self.audit),
            "tasks": Audited("tasks", self.tasks, self.audit),
            "changes": self.changes,
        }
        app = load_app(str(app_path))
        if "stores" in inspect.signature(build_kit).parameters:
            from lambda_mcp.kit import Stores  # type: ignore[attr-defined, unused-ignore]

            return build_kit(app, settings, streaming=streaming, local=local, stores=Stores(**stores))
        stores["task_store"] = stores.pop("tasks")
        return build_kit(app, settings, streaming=streaming, local=local, **stores)  # type: ignore[arg-type, unused-ignore]

    def close(self) -> None:
        logging.getLogger("lambda_mcp").removeHandler(self.errors)
        self.loop.close()

    # sending -----------------------------------------------------------------------------------
    def exchange(self, method: str, headers: dict[str, str], body: bytes, timeout: float) -> tuple[Any, ...]:
        """(status or None, response headers, body) of one request."""
        raise NotImplementedError

    def settle(self) -> None:
        """Let background work of earlier requests finish before state is compared."""

    def send(self, probe: Probe) -> Outcome:
        """Fill in the probe's references, send it, and record what the properties need."""
        self.ensure_sessions()
        headers, version = self.resolve_headers(probe.headers)
        body = self.resolve_body(probe.body)
        self.settle()
        before = snapshot(self)
        self.errors.records.clear()
        self.audit.problems.clear()
        escaped = len(self.guard.escaped)
        open_stream = self.opens_stream(probe.method, headers, body)
        started = time.monotonic()
        timeout = OPEN_STREAM_SECONDS if open_stream else ANSWER_SECONDS
        status, response_headers, response_body = self.exchange(probe.method, headers, body, timeout)
        elapsed = time.monotonic() - started
        self.settle()
        return Outcome(
            status=status,
            headers=response_headers,
            body=response_body,
            request_headers=headers,
            request_body=body,
            session_version=version,
            open_stream=open_stream,
            method=probe.method,
            elapsed=elapsed,
            escaped=self.guard.escaped[escaped:],
            logged=list(self.errors.records),
            key_problems=list(self.audit.problems),
            before=before,
            after=snapshot(self),
        )

    def opens_stream(self, method: str, headers: dict[str, str], body: bytes) -> bool:
        """Whether a well-formed request like this may legitimately never end on this target."""
        return False

    # references ---------------------------------------------------------------------------------
    def resolve_headers(self, pairs: tuple[tuple[str, Any], ...]) -> tuple[dict[str, str], str | None]:
        headers: dict[str, str] = {}
        version = None
        for name, value in pairs:
            if isinstance(value, Ref) and value.kind == "session" and not value.mangle:
                version = value.version
            headers[name] = self.header_value(self.resolve(value))
        return headers, version

    def header_value(self, value: str) -> str:
        """Header text as it can arrive: Unicode without lone surrogates (no HTTP client can send those)."""
        return value.encode("utf-8", "replace").decode("utf-8")

    def resolve_body(self, body: Any) -> bytes:
        if isinstance(body, Raw):
            return body.data
        if isinstance(body, bytes):
            return body
        return json.dumps(self.resolve_tree(body)).encode()

    def resolve_tree(self, value: Any) -> Any:
        if isinstance(value, Ref):
            return self.resolve(value)
        if isinstance(value, dict):
            return {key: self.resolve_tree(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.resolve_tree(item) for item in value]
        return value

    def resolve(self, value: Any) -> str:
        if not isinstance(value, Ref):
            return str(value)
        if value.kind == "session":
            real = self.live.get(value.version, "")
        elif value.kind == "dead-session":
            real = self.dead
        elif value.kind == "host":
            real = self.host
        elif value.kind == "origin":
            real = self.origin
        else:
            pool = self.pools.get(value.kind) or [f"no-{value.kind}-yet"]
            real = pool[value.pick % len(pool)]
        return mangle(real, value.mangle, value.pick)

    # setup ---------------------------------------------------------------------------------------
    def post(self, message: Json, headers: dict[str, str] | None = None) -> tuple[Any, ...]:
        sent = {"host": self.host, "accept": ACCEPT_BOTH, "content-type": "application/json", **(headers or {})}
        body = json.dumps(message).encode()
        status, response_headers, response_body = self.exchange("POST", sent, body, 8.0)
        self.recorder.exchange(sent, body, status or 0, response_headers, response_body)
        self.harvest(response_body)
        return status, response_headers, response_body

    def initialize(self, version: str) -> str:
        params = {
            "protocolVersion": version,
            "capabilities": {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}},
            "clientInfo": {"name": "fuzz", "version": "1"},
        }
        _, headers, _ = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        session = str(headers.get("mcp-session-id", ""))
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, self.legacy(session, version))
        return session

    def legacy(self, session: str, version: str) -> dict[str, str]:
        return {"mcp-session-id": session, "mcp-protocol-version": version}

    def ensure_sessions(self) -> None:
        """A live session of every legacy revision (a DELETE probe may have ended one)."""
        for version in LEGACY:
            if self.live.get(version) not in self.sessions._items:
                self.live[version] = self.initialize(version)

    def seed(self) -> None:
        """Real ids to damage: a deleted session, event ids, a sealed requestState."""
        self.ensure_sessions()
        self.dead = self.initialize("2025-11-25")
        self.exchange("DELETE", {"host": self.host, **self.legacy(self.dead, "2025-11-25")}, b"", 8.0)
        name = "test_input_required_result_request_state"
        meta = {META_VERSION: MODERN, META_CAPABILITIES: {"elicitation": {}}}
        params = {"name": name, "arguments": {}, "_meta": meta}
        routing = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name}
        self.post({"jsonrpc": "2.0", "id": "seed-state", "method": "tools/call", "params": params}, routing)

    def harvest(self, body: bytes) -> None:
        """Keep SSE event ids, server-to-client request ids, requestStates and task ids seen in setup."""
        text = body.decode("utf-8", "replace")
        for event_id in re.findall(r"^id: ?(\S+)$", text, re.MULTILINE):
            self.keep("event", event_id)
        for chunk in re.findall(r"^data: ?(.+)$", text, re.MULTILINE) or [text]:
            with contextlib.suppress(ValueError):
                self._harvest_message(json.loads(chunk))

    def _harvest_message(self, message: Json) -> None:
        if not isinstance(message, dict):
            return
        if isinstance(message.get("method"), str) and isinstance(message.get("id"), str):
            self.keep("input", message["id"])
        result = message.get("result")
        if isinstance(result, dict):
            if isinstance(result.get("requestState"), str):
                self.keep("state", result["requestState"])
            nested = result.get("task")
            task = nested if isinstance(nested, dict) else result
            if isinstance(task.get("taskId"), str):
                self.keep("task", task["taskId"])

    def keep(self, kind: str, value: str) -> None:
        if value not in self.pools[kind]:
            self.pools[kind].append(value)


class LambdaTarget(Target):
    """`Mangum(build_kit(app, settings, streaming=False).asgi())` fed API Gateway HTTP API v2 events."""

    name = "lambda"
    host = DOMAIN
    origin = f"https://{DOMAIN}"

    def __init__(self) -> None:
        super().__init__()
        asyncio.set_event_loop(self.loop)
        settings = Settings(state_key=b"fuzz-key", auth="none", max_wait_seconds=1.0)
        self.kit = self.build(settings, streaming=False, local=False)
        self.guard = Guard(self.kit.asgi())
        self.handler = Mangum(self.guard, lifespan="off")
        self.seed()

    def exchange(self, method: str, headers: dict[str, str], body: bytes, timeout: float) -> tuple[Any, ...]:
        asyncio.set_event_loop(self.loop)
        event = http_api_event(method, "/mcp", headers, body, DOMAIN)
        try:
            response = self.handler(event, LambdaContext())
        except Exception as exc:  # Mangum itself failed: Lambda reports an invocation error, API Gateway a 5xx
            self.guard.escaped.append(f"handler raised {type(exc).__name__}: {str(exc)[:200]}")
            return 502, {}, b""
        response_headers = {str(k).lower(): str(v) for k, v in (response.get("headers") or {}).items()}
        raw = response.get("body") or ""
        data = base64.b64decode(raw) if response.get("isBase64Encoded") else str(raw).encode()
        return int(response["statusCode"]), response_headers, data

    def seed(self) -> None:
        super().seed()
        for version in ("2025-11-25", "2025-06-18"):  # a suspended call: event ids and a server request id
            params = {"name": "test_sampling", "arguments": {"prompt": "hi"}}
            message = {"jsonrpc": "2.0", "id": f"seed-{version}", "method": "tools/call", "params": params}
            self.post(message, self.legacy(self.live[version], version))
        stream = self.exchange("GET", {"host": self.host, **self.legacy(self.live[LEGACY[0]], LEGACY[0])}, b"", 8.0)
        self.harvest(stream[2])  # a change-feed position


class StreamingTarget(Target):
    """`build_kit(..., streaming=True, local=True)` driven in-process through httpx's ASGITransport."""

    name = "streaming"
    host = LOCAL_HOST
    origin = f"http://{LOCAL_HOST}"

    def __init__(self) -> None:
        super().__init__()
        settings = Settings(state_key=b"fuzz-key", auth="none", server_request_timeout_seconds=2.0)
        self.kit = self.build(settings, streaming=True, local=True)
        self.guard = Guard(self.kit.asgi())
        transport = httpx.ASGITransport(app=self.guard, raise_app_exceptions=False)
        self.client = httpx.AsyncClient(transport=transport, base_url=f"http://{LOCAL_HOST}")
        self.seed()

    def close(self) -> None:
        self.loop.run_until_complete(self.client.aclose())
        super().close()

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        return self.loop.run_until_complete(coroutine)

    def exchange(self, method: str, headers: dict[str, str], body: bytes, timeout: float) -> tuple[Any, ...]:
        answer: tuple[Any, ...] = self.run(self._exchange(method, headers, body, timeout))
        return answer

    async def _exchange(self, method: str, headers: dict[str, str], body: bytes, timeout: float) -> tuple[Any, ...]:
        """Exactly these headers (httpx adds none but Host and Content-Length, removed when not wanted)."""
        raw = [(name.encode(), value.encode("latin-1")) for name, value in headers.items()]
        request = httpx.Request(method, f"http://{LOCAL_HOST}/mcp", headers=raw, content=body)
        if "host" not in headers:
            del request.headers["host"]
        try:
            response = await asyncio.wait_for(self.client.send(request), timeout)
        except TimeoutError:
            return None, {}, b""
        return response.status_code, {k.lower(): v for k, v in response.headers.items()}, response.content

    def settle(self) -> None:
        """Wait (at most 3 s) for calls and tasks earlier requests left running."""
        self.run(self._settle(3.0))

    async def _settle(self, limit: float) -> None:
        current = asyncio.current_task()
        pending = [task for task in asyncio.all_tasks() if task is not current and not task.done()]
        if pending:
            await asyncio.wait(pending, timeout=limit)

    def opens_stream(self, method: str, headers: dict[str, str], body: bytes) -> bool:
        """The standalone GET stream (no `Last-Event-ID`) and `subscriptions/listen` follow changes forever."""
        if method == "GET":
            return not headers.get("last-event-id")
        return method == "POST" and b"subscriptions/listen" in body

    def header_value(self, value: str) -> str:
        """What the ASGI app sees: header bytes are Latin-1."""
        return value.encode("latin-1", "replace").decode("latin-1")

    def seed(self) -> None:
        super().seed()
        for name in ("test_tool_with_logging", "test_reconnection"):  # live calls' event ids
            message = {"jsonrpc": "2.0", "id": f"seed-{name}", "method": "tools/call", "params": {"name": name}}
            self.post(message, self.legacy(self.live[LEGACY[0]], LEGACY[0]))
        task = {"name": "failing_job", "arguments": {}, "task": {"ttl": 60_000}}
        self.post(
            {"jsonrpc": "2.0", "id": "seed-task", "method": "tools/call", "params": task},
            self.legacy(self.live[LEGACY[0]], LEGACY[0]),
        )
        self.settle()


class AuthTarget:
    """Mixed into a target: auth `jwt` with a local issuer (real keys over HTTP on 127.0.0.1) in front of
    the scoped test app; probes' `Token`s are signed with the issuer's keys."""

    issuer: LocalIssuer
    host: str

    def auth_settings(self) -> Settings:
        self.issuer = LocalIssuer()
        return Settings(
            state_key=b"fuzz-key",
            auth="jwt",
            auth_issuer=self.issuer.url,
            auth_audience=AUDIENCE,
            auth_scopes=("mcp:tools",),
            max_wait_seconds=1.0,
            server_request_timeout_seconds=2.0,
        )

    def ensure_sessions(self) -> None:
        """The auth family speaks 2026 only: no sessions to keep."""

    def seed(self) -> None:
        """Nothing to harvest: a probe's references are the issuer's and the audience."""

    def resolve(self, value: Any) -> str:
        filled = self.resolve_auth(value)
        return filled if filled is not None else super().resolve(value)  # type: ignore[misc]

    def close(self) -> None:
        self.issuer.stop()
        super().close()  # type: ignore[misc]

    def resolve_auth(self, value: Any) -> str | None:
        if isinstance(value, Ref) and value.kind == "issuer":
            return self.issuer.url
        if isinstance(value, Ref) and value.kind == "audience":
            return AUDIENCE
        if isinstance(value, Bearer):
            token = self.sign(value.token) if isinstance(value.token, Token) else str(value.token)
            return f"{value.scheme} {token}"
        return None

    def sign(self, token: Token) -> str:
        header = {k: self._filled(v) for k, v in token.header}
        claims = {k: self._filled(v) for k, v in token.claims}
        for name in ("exp", "nbf", "iat"):  # the probes' clock (1.9e9) is moved to now
            value = claims.get(name)
            if isinstance(value, int) and abs(value - 1_900_000_000) < 100_000:
                claims[name] = int(time.time()) + value - 1_900_000_000
        head = _b64url(json.dumps(header, default=str).encode()) + "." + _b64url(json.dumps(claims).encode())
        if token.key == "none":
            return head + "."
        signer: Any = {"rsa": self.issuer.rsa_key, "ec": self.issuer.ec_key, "foreign": self.issuer.foreign_key}
        key = signer[token.key]
        algorithm = "ES256" if token.key == "ec" else "RS256"
        signature = jwt.get_algorithm_by_name(algorithm).sign(head.encode(), key)
        return head + "." + _b64url(signature)

    def _filled(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self._filled(item) for item in value]
        filled = self.resolve_auth(value)
        return value if filled is None else filled


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


AUDIENCE = f"https://{DOMAIN}/mcp"
SCOPED = ROOT / "tests/apps/scoped.py"


class AuthLambdaTarget(AuthTarget, LambdaTarget):
    name = "lambda-jwt"

    def __init__(self) -> None:
        Target.__init__(self)
        asyncio.set_event_loop(self.loop)
        self.kit = self.build(self.auth_settings(), streaming=False, local=False, app_path=SCOPED)
        self.guard = Guard(self.kit.asgi())
        self.handler = Mangum(self.guard, lifespan="off")


class AuthStreamingTarget(AuthTarget, StreamingTarget):
    name = "streaming-jwt"

    def __init__(self) -> None:
        Target.__init__(self)
        self.kit = self.build(self.auth_settings(), streaming=True, local=True, app_path=SCOPED)
        self.guard = Guard(self.kit.asgi())
        transport = httpx.ASGITransport(app=self.guard, raise_app_exceptions=False)
        self.client = httpx.AsyncClient(transport=transport, base_url=f"http://{LOCAL_HOST}")


TARGETS: dict[str, Callable[[], Target]] = {
    "lambda": LambdaTarget,
    "streaming": StreamingTarget,
    "lambda-jwt": AuthLambdaTarget,
    "streaming-jwt": AuthStreamingTarget,
}
FAMILIES: dict[str, tuple[str, ...]] = {
    "lambda": ("modern", "legacy", "raw"),
    "streaming": ("modern", "legacy", "raw"),
    "lambda-jwt": ("auth",),
    "streaming-jwt": ("auth",),
}
"""What each target is sent: the auth targets get the `auth` family only."""


# -- state -------------------------------------------------------------------------------------------
def snapshot(target: Target) -> dict[str, Any]:
    """What the in-memory stores hold, compared before and after a refused request."""
    sessions = getattr(target.sessions, "_items", {})
    return {
        "sessions": {
            sid: (record.protocol_version, record.log_level, sorted(record.subscriptions))
            for sid, record in sessions.items()
        },
        "terminated": sorted(getattr(target.sessions, "_terminated", set())),
        "events": {key: len(events) for key, events in getattr(target.events, "_streams", {}).items()},
        "calls": {
            key: (record.nonce, record.cancelled_at, sorted(record.answers), record.version)
            for key, record in getattr(target.calls, "_items", {}).items()
        },
        "tasks": sorted(getattr(target.tasks, "_items", {})),
        "changes": len(getattr(target.changes, "_entries", [])),
    }


def state_changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    changed = []
    for part, was in before.items():
        now = after.get(part)
        if now != was:
            changed.append(f"{part}: {_difference(was, now)}")
    return changed


def _difference(was: Any, now: Any) -> str:
    if isinstance(was, dict) and isinstance(now, dict):
        added = [key for key in now if key not in was]
        altered = [key for key in now if key in was and now[key] != was[key]]
        return f"added {str(added)[:200]}, altered {str(altered)[:200]}"
    return f"{str(was)[:100]} -> {str(now)[:100]}"
