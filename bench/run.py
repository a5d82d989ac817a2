"""Benchmark lambda-mcp against the official MCP Python SDK behind AWS Lambda.

Prints figures; it is not a test. Both stacks serve the same one-tool app
(`bench/apps/`). The headline is the deployed shape (issue 25):

* lambda-mcp as template.yaml deploys it: state in DynamoDB (DynamoDB Local,
  or moto server, on 127.0.0.1; a legacy `initialize` really writes its
  session), Powertools Logger and Metrics on (one JSON log line with EMF per
  request, written to the child's stdout, a pipe the parent drains), called
  through its Lambda handler (Mangum) with API Gateway v2 events;
* the SDK as a user deploys it: `streamable_http_app(stateless_http=True,
  json_response=True)`, logging at INFO (`logging.basicConfig`), served over
  direct ASGI when warm (its Mangum handler cannot serve twice);
* three requests: a 2026-07-28 `tools/call`, a legacy (2025-11-25)
  `initialize`, and a legacy `tools/call` (on lambda-mcp inside a session);
* cold: fresh processes, import + first request, and resident memory after
  it, in wall time and (once, bench/instructions.py) in CPU instructions;
  warm: p50 and p99 per request;
* the streaming path cold (bench/serve_cold.py): `lambda-mcp serve` through
  its run.sh against the SDK's own server under uvicorn, both started and
  polled as the Lambda Web Adapter does.

The earlier rows (lambda-mcp with no state configured, without observability,
and the SDK with its INFO lines off) follow as secondary lines, with a floor
for the warm rows (the least an app can do for the 2026 call, logging as
deployed: bench/apps/floor_app.py), and the
`-X importtime` breakdown last. Every response is checked (HTTP 200, the
expected JSON-RPC result); any failure stops the run with a nonzero exit.
Missing a target does not.

Usage: python bench/run.py [--cold-runs N] [--warm-requests M] [--warm-rounds R] [--repeat K] [--no-instructions]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import importlib
import inspect
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
APPS = BENCH / "apps"
DOMAIN = "abc123defg.execute-api.us-east-1.amazonaws.com"
# issue 25 (issue 14 set cold 0.20 and warm 0.10 on the bare shape; issue 2 set 0.35 and 0.25); issue 40 settled
# warm at 0.35 (the 0.10 of issue 25 was blocked: a hand-written floor serving one request measures 0.04-0.11)
# and set serve at 0.35
TARGETS = {"cold": 0.20, "cold_initialize": 0.45, "warm": 0.35, "serve": 0.35}
TABLE = "bench-state"

ASGIApp = Callable[[MutableMapping[str, Any], Any, Any], Awaitable[None]]
Check = Callable[[int, str | bytes], str | None]
RESULT = "BENCH_RESULT "  # prefix of a child's result line (its other stdout lines are log lines)


class BenchError(Exception):
    """A response or subprocess that the benchmark must not silently measure."""


# --- wires ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wire:
    """One request: `tools/call add(1, 2)` on some protocol revision, or a legacy `initialize`."""

    key: str
    description: str
    headers: dict[str, str]
    body: str


def _make_wire(key: str, version: str, modern: bool, description: str) -> Wire:
    params: dict[str, Any] = {"name": "add", "arguments": {"a": 1, "b": 2}}
    headers = {
        "host": DOMAIN,
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": version,
    }
    if modern:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        headers |= {"mcp-method": "tools/call", "mcp-name": "add"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return Wire(key, description, headers, json.dumps(body, separators=(",", ":")))


WIRES = {
    "modern": _make_wire(
        "modern",
        "2026-07-28",
        True,
        "2026-07-28 tools/call: per-request envelope (mcp-method/mcp-name headers, _meta), no initialize",
    ),
    "legacy": _make_wire(
        "legacy",
        "2025-11-25",
        False,
        "2025-11-25 tools/call: the SDK's stateless server takes it bare; lambda-mcp inside a session"
        " (Mcp-Session-Id from an untimed initialize; the session is read from DynamoDB)",
    ),
    "initialize": Wire(
        "initialize",
        "2025-11-25 initialize (lambda-mcp creates a session: one conditional PutItem)",
        {"host": DOMAIN, "content-type": "application/json", "accept": "application/json, text/event-stream"},
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "b", "version": "1"},
                },
            }
        ),
    ),
}
HEADLINE_WIRE = "modern"
INITIALIZE = WIRES["initialize"]


def with_session(wire: Wire, session_id: str) -> Wire:
    return Wire(wire.key, wire.description, {**wire.headers, "mcp-session-id": session_id}, wire.body)


def api_gw_v2_event(wire: Wire) -> dict[str, Any]:
    """An API Gateway HTTP API (payload v2.0) event for `POST /mcp`; `host` = `domainName`."""
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": "/mcp",
        "rawQueryString": "",
        "headers": dict(wire.headers),
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abc123defg",
            "domainName": DOMAIN,
            "domainPrefix": "abc123defg",
            "http": {
                "method": "POST",
                "path": "/mcp",
                "protocol": "HTTP/1.1",
                "sourceIp": "203.0.113.7",
                "userAgent": "bench",
            },
            "requestId": "bench-request",
            "routeKey": "$default",
            "stage": "$default",
            "time": "01/Jan/2026:00:00:00 +0000",
            "timeEpoch": 1767225600000,
        },
        "body": wire.body,
        "isBase64Encoded": False,
    }


def check_response(status: int, body: str | bytes) -> str | None:
    """Return why a `tools/call add(1, 2)` response is wrong, or None if it is right."""
    if status != 200:
        return f"status {status}"
    try:
        msg = json.loads(body)
        content = msg["result"]["content"]
    except (ValueError, KeyError, TypeError):
        return "body is not a JSON-RPC result with content"
    if msg.get("id") != 1 or msg["result"].get("isError") or content[0].get("text") != "3":
        return "result is not add(1, 2) = 3"
    return None


def check_initialize(status: int, body: str | bytes) -> str | None:
    """Return why an `initialize` response is wrong, or None if it is right."""
    if status != 200:
        return f"status {status}"
    try:
        version = json.loads(body)["result"]["protocolVersion"]
    except (ValueError, KeyError, TypeError):
        return "body is not an InitializeResult"
    return None if version == "2025-11-25" else f"negotiated {version}"


def check_for(wire: Wire) -> Check:
    return check_initialize if wire.key == "initialize" else check_response


def mangum_status_body(resp: dict[str, Any]) -> tuple[int, str]:
    """The status and decoded body of a Mangum API Gateway response."""
    body = resp.get("body") or ""
    if resp.get("isBase64Encoded"):
        body = base64.b64decode(body).decode()
    return int(resp["statusCode"]), body


def session_header(headers: dict[str, Any] | None) -> str | None:
    return {str(k).lower(): v for k, v in (headers or {}).items()}.get("mcp-session-id")


# --- stacks --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stack:
    """How to import one stack's Lambda entrypoint and drive its ASGI app."""

    key: str
    module: str
    env: dict[str, str]
    mangum_warm: bool  # can its Mangum handler serve more than one invocation?
    asgi_lifespan: bool  # must the ASGI lifespan be entered before serving?
    deployed: bool = False  # headline: DynamoDB configured (lambda-mcp), logging as deployed (both)
    sessions: bool = False  # lambda-mcp: a legacy tools/call needs a session (initialize first)
    wires: tuple[str, ...] = (HEADLINE_WIRE,)  # timed warm (and, for headline stacks, cold)
    observer: bool = False  # wrap direct ASGI calls in the entrypoint's observer (log line + EMF)


KIT_ENV = {
    "LAMBDA_MCP_APP": f"{APPS / 'lambda_mcp_app.py'}:app",
    # Allowed host from config, as for the SDK: direct ASGI calls carry no Lambda event
    # for lambda-mcp to take `requestContext.domainName` from.
    "LAMBDA_MCP_ALLOWED_HOSTS": DOMAIN,
    "LAMBDA_MCP_AUTH": "none",
}
ALL_WIRES = tuple(WIRES)
KIT, SDK, FLOOR = "lambda-mcp", "sdk", "floor"
STACKS = {
    KIT: Stack(KIT, "lambda_mcp.entrypoints.http", KIT_ENV, True, False, True, True, ALL_WIRES, True),
    SDK: Stack(SDK, "sdk_app", {"BENCH_ALLOWED_HOSTS": DOMAIN}, False, True, True, False, ALL_WIRES),
    # secondary: the shapes of the earlier headline (before the lazy storage clients)
    "lambda-mcp-nostate": Stack(
        "lambda-mcp-nostate", "lambda_mcp.entrypoints.http", KIT_ENV, True, False, observer=True
    ),
    "lambda-mcp-bare": Stack("lambda-mcp-bare", "lambda_mcp_bare", KIT_ENV, True, False),
    "sdk-quiet": Stack(
        "sdk-quiet", "sdk_app", {"BENCH_ALLOWED_HOSTS": DOMAIN, "BENCH_SDK_LOG_LEVEL": "WARNING"}, False, True
    ),
    # reference: the least an app can do for the 2026 call, logging as deployed (bench/apps/floor_app.py)
    FLOOR: Stack(FLOOR, "floor_app", {"BENCH_ALLOWED_HOSTS": DOMAIN, "PYTHONUNBUFFERED": "1"}, True, False),
}
DEPLOYED_ENV: dict[str, str] = {}  # lambda-mcp's state settings, filled in once the local DynamoDB is up
# What a Lambda function's environment has, and template.yaml's Globals: Powertools' service name and
# the kit's metrics namespace; the log level Lambda sets from LoggingConfig (ApplicationLogLevel INFO).
LOGGING_ENV = {
    "POWERTOOLS_SERVICE_NAME": "bench",
    "LAMBDA_MCP_METRICS_NAMESPACE": "bench",
    "AWS_LAMBDA_LOG_LEVEL": "INFO",
    "AWS_LAMBDA_LOG_FORMAT": "JSON",
    # the Lambda runtime (awslambdaric) makes stdout and stderr unbuffered: every log line is a write
    "PYTHONUNBUFFERED": "1",
}


def child_env(stack: Stack) -> dict[str, str]:
    """Environment for a stack's subprocess: this one's, less its Python, AWS and kit settings, and the
    stack's own (`stack_env`)."""
    drop = ("LAMBDA_MCP_", "PYTHON", "AWS_", "POWERTOOLS_", "LOG_LEVEL")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)} | stack_env(stack)


def stack_env(stack: Stack) -> dict[str, str]:
    """A stack's settings: fake Lambda variables and credentials, `src` and `bench/apps` on the path; the
    deployed settings for headline stacks."""
    env = {
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(APPS)]),
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_LAMBDA_FUNCTION_NAME": "bench",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
    }
    env |= stack.env
    if stack.deployed:
        env |= LOGGING_ENV | (DEPLOYED_ENV if stack.key == KIT else {})
    return env


class FakeLambdaContext:
    """The parts of the Lambda context object a handler may read."""

    aws_request_id = "bench-request"
    function_name = "bench"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench"
    memory_limit_in_mb = 1024
    log_group_name = "/aws/lambda/bench"
    log_stream_name = "bench"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


@contextlib.contextmanager
def local_dynamodb() -> Any:
    """Yield (engine, endpoint, boto3 client) of a local DynamoDB on 127.0.0.1 with the state table made:
    DynamoDB Local from .cache/ddb-local (bench/_local.py), else moto server."""
    sys.path.insert(0, str(REPO / "src"))
    sys.path.insert(0, str(BENCH))
    import boto3
    from _local import DYNAMODB_LOCAL, start_dynamodb_local

    from lambda_mcp.local import aws

    with contextlib.ExitStack() as stack:
        if list(DYNAMODB_LOCAL.glob("dynamodb_local_*/DynamoDBLocal.jar")):
            engine, endpoint = "DynamoDB Local", start_dynamodb_local(stack)
        else:
            local = aws.start(None, engine="moto")
            stack.callback(local.stop)
            engine, endpoint = "moto server", local.endpoint
        aws.configure(endpoint, TABLE)  # creates the table (and sets this process's env, unused by children)
        client = boto3.client(
            "dynamodb",
            region_name="us-east-1",
            endpoint_url=endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        yield engine, endpoint, client


def count_items(client: Any) -> int:
    """Items in the state table (proof that the legacy initializes wrote their sessions)."""
    return sum(int(page["Count"]) for page in client.get_paginator("scan").paginate(TableName=TABLE, Select="COUNT"))


# --- subprocess helpers --------------------------------------------------------------------


def run_child(stack: Stack, args: list[str]) -> tuple[str, str, float]:
    """Run `python ARGS` for a stack; return stdout, stderr and spawn-to-exit seconds. Both are pipes
    drained by this process: a stack's log lines are really written, as on Lambda."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, *args],
        check=False,
        env=child_env(stack),
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise BenchError(f"{stack.key}: subprocess {args[:2]} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout, proc.stderr, wall


def child_result(stack: Stack, out: str) -> Any:
    lines = [line for line in out.splitlines() if line.startswith(RESULT)]
    if not lines:
        raise BenchError(f"{stack.key}: no result line in the child's output\n{out[-2000:]}")
    return json.loads(lines[-1][len(RESULT) :])


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def percentile(xs: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of xs."""
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


# --- cold ----------------------------------------------------------------------------------

COLD_SNIPPET = """\
import time
_t0 = time.perf_counter()
import {module} as _entry
_t1 = time.perf_counter()
_resp = _entry.handler({event!r}, FakeLambdaContext())
_t2 = time.perf_counter()
import json
_rss_kb = 0
with open("/proc/self/status") as _f:
    for _line in _f:
        if _line.startswith("VmRSS:"):
            _rss_kb = int(_line.split()[1])
_out = {{"import_s": _t1 - _t0, "first_call_s": _t2 - _t1, "rss_kb": _rss_kb,
         "status": int(_resp["statusCode"]), "resp": {{**_resp, "statusCode": int(_resp["statusCode"])}}}}
if {probe}:
    try:
        _r2 = _entry.handler({event!r}, FakeLambdaContext())
        _out["second"] = "served: status %s" % int(_r2["statusCode"])
    except BaseException as exc:
        _out["second"] = "raised %s: %s" % (type(exc).__name__, (str(exc).strip().splitlines() or [""])[-1])
print({marker!r} + json.dumps(_out))
"""

CTX_SNIPPET = inspect.getsource(FakeLambdaContext)  # the cold child defines it too
COLD_FIELDS = ("import_s", "first_call_s", "init_s", "wall_s", "rss_kb")


def cold_code(stack: Stack, wire: Wire, probe: bool = False) -> str:
    """The cold child's program: import the entrypoint, serve the first request through the Lambda handler."""
    return CTX_SNIPPET + COLD_SNIPPET.format(
        module=stack.module, event=api_gw_v2_event(wire), probe=probe, marker=RESULT
    )


def cold_once(stack: Stack, wire: Wire, probe: bool = False) -> dict[str, Any]:
    """One fresh process: import the entrypoint, serve the first request through the Lambda handler, check it."""
    out, _err, wall = run_child(stack, ["-c", cold_code(stack, wire, probe)])
    result = check_cold(stack, wire, out)
    result["wall_s"] = wall
    result["init_s"] = result["import_s"] + result["first_call_s"]
    return result


def check_cold(stack: Stack, wire: Wire, out: str) -> dict[str, Any]:
    """The cold child's result line, its response checked."""
    result = child_result(stack, out)
    status, body = mangum_status_body(result["resp"])
    if problem := check_for(wire)(status, body):
        raise BenchError(
            f"{stack.key} cold first request on {wire.key} wire: {problem}\n"
            f"request: {wire.headers} {wire.body}\nresponse: {result['resp']}"
        )
    return result


def python_startup(runs: int) -> float:
    """Median spawn-to-exit seconds of `python -c pass` (interpreter baseline)."""
    walls = [run_child(STACKS["sdk-quiet"], ["-c", "pass"])[2] for _ in range(runs)]
    return median(walls)


def cold_cases() -> list[tuple[str, str]]:
    """(stack, wire) pairs measured cold: every wire on the headline stacks, the 2026 call on the rest."""
    return [(key, wire) for key, stack in STACKS.items() for wire in (stack.wires if stack.deployed else ("modern",))]


def bench_cold(runs: int, session_id: str) -> dict[str, Any]:
    """Fresh processes, every case once per pass, the order reversed every other pass.

    lambda-mcp's cold legacy tools/call is the first request of a new instance on an existing session
    (`session_id`, made by an untimed process): it reads the session from DynamoDB."""
    cases = cold_cases()
    samples: dict[str, list[dict[str, Any]]] = {f"{k}/{w}": [] for k, w in cases}
    for i in range(runs):
        for key, wire_key in cases if i % 2 == 0 else cases[::-1]:
            stack, wire = STACKS[key], WIRES[wire_key]
            if stack.sessions and wire_key == "legacy":
                wire = with_session(wire, session_id)
            samples[f"{key}/{wire_key}"].append(cold_once(stack, wire))
    stats: dict[str, Any] = {}
    for case, rows in samples.items():
        stats[case] = {f: median([row[f] for row in rows]) for f in COLD_FIELDS}
        stats[case]["range_init_s"] = (min(r["init_s"] for r in rows), max(r["init_s"] for r in rows))
    return stats


def new_session() -> str:
    """A legacy session in the state table, made by one untimed lambda-mcp process."""
    result = cold_once(STACKS[KIT], INITIALIZE)
    session_id = session_header(result["resp"].get("headers"))
    if not session_id:
        raise BenchError(f"lambda-mcp initialize returned no Mcp-Session-Id: {result['resp']}")
    return session_id


# --- warm (runs inside a worker subprocess) ------------------------------------------------


def asgi_scope(wire: Wire) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "https",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in wire.headers.items()],
        "server": (DOMAIN, 443),
        "client": ("203.0.113.7", 0),
        "state": {},
    }


async def asgi_call(app: ASGIApp, scope: dict[str, Any], body: bytes) -> tuple[int, bytes, dict[str, str]]:
    """One direct ASGI request, with Mangum's receive semantics (body, then disconnect after the reply)."""
    done = asyncio.Event()
    pending = [{"type": "http.request", "body": body, "more_body": False}]
    status = 0
    headers: dict[str, str] = {}
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop()
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            headers.update((k.decode().lower(), v.decode()) for k, v in message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                done.set()

    await app(dict(scope), receive, send)
    return status, b"".join(chunks), headers


class AsgiLifespan:
    """Enter and leave an ASGI app's lifespan the way an ASGI server does."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.to_app: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.from_app: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
        self.task = asyncio.create_task(self.app(scope, self.to_app.get, self.from_app.put))
        await self.to_app.put({"type": "lifespan.startup"})
        if (msg := await self.from_app.get())["type"] != "lifespan.startup.complete":
            raise BenchError(f"lifespan startup failed: {msg}")

    async def __aexit__(self, *exc: object) -> None:
        await self.to_app.put({"type": "lifespan.shutdown"})
        await self.from_app.get()
        assert self.task is not None
        await self.task


def observed_asgi(entry: Any) -> ASGIApp:
    """lambda-mcp's ASGI app inside its entrypoint's observer, as `Observer.http` wraps the Lambda handler:
    an invocation record, then one JSON log line with EMF. Direct ASGI calls then log as deployed."""
    from lambda_mcp.observe.invocation import invocation

    observer, app = entry.lambda_observer(), entry.app

    async def observed(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        status = 500

        async def send_status(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        with invocation("bench-request", cold_start=observer.take_cold_start()) as record:
            try:
                await app(scope, receive, send_status)
            finally:
                observer.write(record, "request", status=status)

    return observed


def _verify(stack: Stack, wire: Wire, mode: str, status: int, body: str | bytes) -> None:
    if problem := check_for(wire)(status, body):
        detail = f"{stack.key} {mode} on {wire.key} wire: {problem}\nrequest: {wire.headers} {wire.body}\n"
        raise BenchError(detail + f"response: {status} {body!r}")


def warm_mangum(stack: Stack, handler: Any, wire: Wire, n: int, warmup: int) -> list[float]:
    ctx, times = FakeLambdaContext(), []
    if stack.sessions and wire.key == "legacy":
        resp = handler(api_gw_v2_event(INITIALIZE), ctx)
        _verify(stack, INITIALIZE, "mangum", *mangum_status_body(resp))
        wire = with_session(wire, session_header(resp.get("headers")) or "")
    event = api_gw_v2_event(wire)
    for i in range(warmup + n):
        start = time.perf_counter()
        resp = handler(event, ctx)
        elapsed = time.perf_counter() - start
        _verify(stack, wire, "mangum", *mangum_status_body(resp))
        if i >= warmup:
            times.append(elapsed)
    return times


async def warm_asgi(stack: Stack, app: ASGIApp, wire: Wire, n: int, warmup: int) -> list[float]:
    if stack.sessions and wire.key == "legacy":
        status, out, headers = await asgi_call(app, asgi_scope(INITIALIZE), INITIALIZE.body.encode())
        _verify(stack, INITIALIZE, "asgi", status, out)
        wire = with_session(wire, headers.get("mcp-session-id", ""))
    scope, body, times = asgi_scope(wire), wire.body.encode(), []
    for i in range(warmup + n):
        start = time.perf_counter()
        status, out, _headers = await asgi_call(app, scope, body)
        elapsed = time.perf_counter() - start
        _verify(stack, wire, "asgi", status, out)
        if i >= warmup:
            times.append(elapsed)
    return times


async def warm_asgi_all(stack: Stack, app: ASGIApp, n: int, warmup: int) -> dict[str, list[float]]:
    """Every wire over direct ASGI, inside one lifespan (the SDK's can be entered only once)."""
    out: dict[str, list[float]] = {}
    async with AsgiLifespan(app) if stack.asgi_lifespan else contextlib.nullcontext():
        for key in stack.wires:
            out[f"asgi/{key}"] = await warm_asgi(stack, app, WIRES[key], n, warmup)
    return out


def warm_worker(stack_key: str, n: int, warmup: int) -> None:
    """Worker entry: import a stack, time `n` requests per mode and wire, print every timing (JSON)."""
    stack = STACKS[stack_key]
    entry = importlib.import_module(stack.module)
    handler = entry.handler
    app: ASGIApp | None = observed_asgi(entry) if stack.observer else getattr(entry, "app", None)
    app = app or getattr(handler, "app", None)
    if app is None:
        raise BenchError(f"{stack.key}: handler {handler!r} exposes no ASGI `.app`")
    out: dict[str, list[float]] = {}
    if stack.mangum_warm:
        for key in stack.wires:
            out[f"mangum/{key}"] = warm_mangum(stack, handler, WIRES[key], n, warmup)
    loop = asyncio.new_event_loop()  # private loop: Mangum keeps using its own
    try:
        out |= loop.run_until_complete(warm_asgi_all(stack, app, n, warmup))
    finally:
        loop.close()
    print(RESULT + json.dumps(out))


def bench_warm(rounds: int, n: int, warmup: int) -> dict[str, dict[str, dict[str, float]]]:
    """p50 and p99 of every timed request, pooled over the rounds (one process per stack per round)."""
    pooled: dict[str, dict[str, list[float]]] = {key: {} for key in STACKS}
    order = list(STACKS)
    for i in range(rounds):
        for key in order if i % 2 == 0 else order[::-1]:
            args = [str(Path(__file__)), "--worker", key, "--warm-requests", str(n), "--warmup", str(warmup)]
            out, _err, _wall = run_child(STACKS[key], args)
            for metric, times in child_result(STACKS[key], out).items():
                pooled[key].setdefault(metric, []).extend(times)
    return {
        key: {m: {"p50": percentile(t, 50), "p99": percentile(t, 99)} for m, t in metrics.items()}
        for key, metrics in pooled.items()
    }


# --- instructions (bench/instructions.py) --------------------------------------------------


def bench_instructions() -> dict[str, int] | None:
    """The headline cold cases in CPU instructions, once (they do not vary); None without valgrind."""
    import instructions

    def program(key: str, wire: str) -> tuple[str, dict[str, str]]:
        return cold_code(STACKS[key], WIRES[wire]), stack_env(STACKS[key])

    return instructions.cold_counts(program, lambda key, wire, out: check_cold(STACKS[key], WIRES[wire], out))


# --- import time ---------------------------------------------------------------------------


def parse_importtime(stderr: str) -> dict[str, tuple[int, int]]:
    """`-X importtime` output as {module: (self_us, cumulative_us)}."""
    rows: dict[str, tuple[int, int]] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cum_us, name = line[len("import time:") :].split("|", 2)
        rows[name.strip()] = (int(self_us), int(cum_us))
    return rows


IMPORT_STACKS = (KIT, "lambda-mcp-bare", SDK)


def bench_importtime(runs: int) -> dict[str, dict[str, Any]]:
    baseline = set(parse_importtime(run_child(STACKS["sdk-quiet"], ["-X", "importtime", "-c", "pass"])[1]))
    stats: dict[str, dict[str, Any]] = {}
    for key in IMPORT_STACKS:
        stack = STACKS[key]
        totals: list[tuple[int, dict[str, tuple[int, int]]]] = []
        for _ in range(runs):
            err = run_child(stack, ["-X", "importtime", "-c", f"import {stack.module}"])[1]
            rows = {m: t for m, t in parse_importtime(err).items() if m not in baseline}
            totals.append((sum(s for s, _ in rows.values()), rows))
        totals.sort(key=lambda t: t[0])
        total, rows = totals[len(totals) // 2]
        packages: dict[str, int] = {}
        for name, (self_us, _) in rows.items():
            packages[name.split(".")[0]] = packages.get(name.split(".")[0], 0) + self_us
        stats[key] = {
            "total_us": total,
            "modules": len(rows),
            "top": sorted(rows.items(), key=lambda r: -r[1][0])[:10],
            "packages": sorted(packages.items(), key=lambda p: -p[1])[:8],
        }
    return stats


# --- report --------------------------------------------------------------------------------


@dataclass
class Row:
    """One summary line: lambda-mcp's figure against the SDK's (b None: no SDK figure), per run."""

    label: str
    unit: str  # "ms", "us" or "MB"
    target: float | None = None
    a: list[float] = field(default_factory=list)
    b: list[float | None] = field(default_factory=list)
    note: str = ""


SCALE = {"ms": 1e3, "us": 1e6, "MB": 1 / 1024}  # from seconds, or from kB for MB


def streaming_servers() -> list[Any]:
    """The streaming path cold (bench/serve_cold.py): `lambda-mcp serve` through run.sh, state in the local
    DynamoDB as deployed, and the SDK's own server under uvicorn, each started and polled as LWA does."""
    import serve_cold

    return serve_cold.servers(child_env(STACKS[KIT]), child_env(STACKS[SDK]))


def measure(args: argparse.Namespace, session_id: str) -> dict[str, Any]:
    import serve_cold

    return {
        "serve": serve_cold.measure(streaming_servers(), args.cold_runs),  # first: a failure shows at once
        "cold": bench_cold(args.cold_runs, session_id),
        "warm": bench_warm(args.warm_rounds, args.warm_requests, args.warmup),
    }


def headline_rows(runs: list[dict[str, Any]]) -> tuple[list[Row], list[Row]]:
    """The headline rows (deployed shape) and the secondary rows, each with one value per run."""
    bare, nostate, quiet = "lambda-mcp-bare", "lambda-mcp-nostate", "sdk-quiet"
    head: list[Row] = []
    second: list[Row] = []

    def add(rows: list[Row], label: str, unit: str, target: float | None, get: Callable[[dict[str, Any]], Any]) -> None:
        row = Row(label, unit, target)
        for run in runs:
            a, b = get(run)
            row.a.append(a)
            row.b.append(b)
        rows.append(row)

    def cold(run: dict[str, Any], key: str, wire: str, fld: str = "init_s") -> float:
        return float(run["cold"][f"{key}/{wire}"][fld])

    def warm(run: dict[str, Any], key: str, metric: str, q: str) -> float:
        return float(run["warm"][key][metric][q])

    def serve(run: dict[str, Any], key: str) -> float:  # median s, process start to the first answer
        return median([start.answered for start in run["serve"][key]]) / 1000

    targets = {"modern": TARGETS["cold"], "initialize": TARGETS["cold_initialize"], "legacy": None}
    names = {"modern": "2026 tools/call", "initialize": "legacy initialize", "legacy": "legacy tools/call"}
    for wire in ALL_WIRES:
        add(head, f"cold: import + 1st {names[wire]}", "ms", targets[wire],
            lambda r, w=wire: (cold(r, KIT, w), cold(r, SDK, w)))  # fmt: skip
    for wire in ALL_WIRES:
        for q in ("p50", "p99"):
            target = TARGETS["warm"] if wire == "modern" and q == "p50" else None
            add(head, f"warm ASGI {names[wire]} {q}", "us", target,
                lambda r, w=wire, q=q: (warm(r, KIT, f"asgi/{w}", q), warm(r, SDK, f"asgi/{w}", q)))  # fmt: skip
    for wire in ALL_WIRES:
        for q in ("p50", "p99"):
            add(head, f"warm Mangum {names[wire]} {q} (SDK: ASGI)", "us", None,
                lambda r, w=wire, q=q: (warm(r, KIT, f"mangum/{w}", q), warm(r, SDK, f"asgi/{w}", q)))  # fmt: skip
    add(head, "cold streaming: start to 1st 2026 tools/call (serve / SDK + uvicorn)", "ms", TARGETS["serve"],
        lambda r: (serve(r, "lambda-mcp serve"), serve(r, "sdk + uvicorn")))  # fmt: skip
    for wire in ("modern", "initialize"):
        add(head, f"RSS after 1st {names[wire]}", "MB", None,
            lambda r, w=wire: (cold(r, KIT, w, "rss_kb"), cold(r, SDK, w, "rss_kb")))  # fmt: skip

    add(second, "cold 2026, process start to answer: serve via run.sh / buffered handler", "ms", None,
        lambda r: (serve(r, "lambda-mcp serve"), cold(r, KIT, "modern", "wall_s")))  # fmt: skip
    add(second, "cold 2026: no state configured (SDK quiet)", "ms", None,
        lambda r: (cold(r, nostate, "modern"), cold(r, quiet, "modern")))  # fmt: skip
    add(second, "cold 2026: no state, no observability (SDK quiet)", "ms", None,
        lambda r: (cold(r, bare, "modern"), cold(r, quiet, "modern")))  # fmt: skip
    add(second, "cold 2026: DynamoDB configured / no state", "ms", None,
        lambda r: (cold(r, KIT, "modern"), cold(r, nostate, "modern")))  # fmt: skip
    add(second, "cold 2026: SDK logging INFO / quiet", "ms", None,
        lambda r: (cold(r, SDK, "modern"), cold(r, quiet, "modern")))  # fmt: skip
    add(second, "warm ASGI 2026 p50: no state (SDK quiet)", "us", None,
        lambda r: (warm(r, nostate, "asgi/modern", "p50"), warm(r, quiet, "asgi/modern", "p50")))  # fmt: skip
    add(second, "warm ASGI 2026 p50: bare (SDK quiet)", "us", None,
        lambda r: (warm(r, bare, "asgi/modern", "p50"), warm(r, quiet, "asgi/modern", "p50")))  # fmt: skip
    add(second, "warm ASGI 2026 p50: floor (SDK as deployed)", "us", None,
        lambda r: (warm(r, FLOOR, "asgi/modern", "p50"), warm(r, SDK, "asgi/modern", "p50")))  # fmt: skip
    add(second, "warm ASGI 2026 p50: lambda-mcp as deployed / floor", "us", None,
        lambda r: (warm(r, KIT, "asgi/modern", "p50"), warm(r, FLOOR, "asgi/modern", "p50")))  # fmt: skip
    add(second, "warm Mangum 2026 p50: no state / bare", "us", None,
        lambda r: (warm(r, nostate, "mangum/modern", "p50"), warm(r, bare, "mangum/modern", "p50")))  # fmt: skip
    add(second, "RSS after 1st 2026 call: bare (SDK quiet)", "MB", None,
        lambda r: (cold(r, bare, "modern", "rss_kb"), cold(r, quiet, "modern", "rss_kb")))  # fmt: skip
    return head, second


def fmt_range(values: list[float], unit: str) -> str:
    scale = SCALE[unit]
    lo, hi = min(values) * scale, max(values) * scale
    return f"{lo:.1f} {unit}" if len(values) == 1 else f"{lo:.1f}-{hi:.1f} {unit}"


def print_table(title: str, rows: list[Row], b_name: str) -> None:
    header = ("metric", KIT, b_name, "ratio", "target", "met?")
    table = [header]
    for row in rows:
        bs = [b for b in row.b if b is not None]
        ratios = [a / b for a, b in zip(row.a, row.b, strict=True) if b]
        rng = f"{min(ratios):.3f}x" if len(ratios) == 1 else f"{min(ratios):.3f}-{max(ratios):.3f}x"
        met = "-"
        if row.target is not None:
            hits = sum(r <= row.target for r in ratios)
            met = "yes" if hits == len(ratios) else ("NO" if len(ratios) == 1 else f"NO ({hits}/{len(ratios)})")
        tgt = "-" if row.target is None else f"<= {row.target:.2f}x"
        table.append((row.label, fmt_range(row.a, row.unit), fmt_range(bs, row.unit) if bs else "n/a", rng, tgt, met))
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    print(title)
    for i, r in enumerate(table):
        print("   " + "  ".join(c.ljust(widths[j]) if j == 0 else c.rjust(widths[j]) for j, c in enumerate(r)))
        if i == 0:
            print("   " + "  ".join("-" * wd for wd in widths))


def report(args: argparse.Namespace, runs: list[dict[str, Any]], imp: dict[str, Any], env: dict[str, Any]) -> None:
    print("lambda-mcp vs official MCP Python SDK (mcp 2.3.0 MCPServer) behind AWS Lambda")
    print(f"python {sys.version.split()[0]}, {sys.platform}; API Gateway v2 events, host = {DOMAIN}")
    print(f"state: table {TABLE} on {env['engine']} at {env['endpoint']}; {env['items']} items in it after the run")
    print(f"{len(runs)} run(s) of: {args.cold_runs} cold processes per case (median), "
          f"{args.warm_rounds} warm rounds x {args.warm_requests} requests per stack and wire "
          f"(p50/p99 pooled, {args.warmup} untimed first)")  # fmt: skip
    print(f"python -c pass, spawn to exit: {env['baseline_s'] * 1e3:.1f} ms")
    print()
    print("Requests:")
    for wire in WIRES.values():
        print(f"  {wire.key:10} {wire.description}")
    print("Stacks:")
    print("  lambda-mcp          deployed shape: LAMBDA_MCP_TABLE_NAME on the local DynamoDB, Powertools Logger +")
    print("                      Metrics on (a JSON line with EMF per request to stdout, unbuffered); cold and")
    print("                      Mangum rows through its Lambda handler; ASGI rows through the same observer")
    print("  sdk                 stateless + JSON Streamable HTTP app, logging.basicConfig(level=INFO) on stderr;")
    print("                      cold through Mangum (first invocation), warm over direct ASGI (Mangum can't")
    print("                      serve twice: its session manager's run() is entered per invocation)")
    print("  lambda-mcp-nostate  secondary: as before issue 25's headline: no state configured, observability on")
    print("  lambda-mcp-bare     secondary: no state, no observability (bench/apps/lambda_mcp_bare.py)")
    print("  sdk-quiet           secondary: the SDK at log level WARNING (the earlier headline's SDK)")
    print("  floor               reference: the least an ASGI app can do for the 2026 call (checks, result,")
    print("                      one JSON log line with EMF), not a server (bench/apps/floor_app.py)")
    for key, probe in env["probes"].items():
        print(f"  second Mangum invocation in one process, {key}: {probe}")
    print()

    head, second = headline_rows(runs)
    ranges = " (ranges: min-max over the runs)" if len(runs) > 1 else ""
    print_table(f"== Headline: the deployed shape (ratio = lambda-mcp / SDK, lower is better){ranges}", head, SDK)
    print()
    if env["instructions"] is None:
        print("== Cold in CPU instructions: not measured (--no-instructions, or valgrind is not installed)")
    else:
        from instructions import report as instructions_report

        instructions_report(env["instructions"], TARGETS)
    print()
    print_table("== Secondary: the earlier shapes (ratio = first / second)", second, "vs")
    print()

    last = runs[-1]
    print("== Cold detail, last run (median over processes; in-process import + 1st request, and its range)")
    print(f"   {'case':32} {'import':>9} {'1st req':>9} {'init':>9} {'range':>17} {'spawn-exit':>11} {'RSS':>8}")
    for case, s in last["cold"].items():
        lo, hi = s["range_init_s"]
        print(
            f"   {case:32} {s['import_s'] * 1e3:6.1f} ms {s['first_call_s'] * 1e3:6.1f} ms {s['init_s'] * 1e3:6.1f} ms"
            f" {lo * 1e3:6.1f}-{hi * 1e3:6.1f} ms {s['wall_s'] * 1e3:8.1f} ms {s['rss_kb'] / 1024:5.1f} MB"
        )
    print()
    from serve_cold import report as serve_report

    serve_report(last["serve"], env["serve_profiles"])
    print()
    print("== Warm detail, last run (per request, pooled over rounds)")
    for key, metrics in last["warm"].items():
        cells = ", ".join(f"{m} {v['p50'] * 1e6:.1f}/{v['p99'] * 1e6:.1f}" for m, v in metrics.items())
        print(f"   {key:19} p50/p99 us: {cells}")
    print()

    print(f"== Import time (python -X importtime -c 'import <entrypoint>', median of {args.import_runs} runs,")
    print("   modules imported by `python -c pass` excluded; the app module load is included)")
    for key in IMPORT_STACKS:
        s, stack = imp[key], STACKS[key]
        print(f"   {key}: import {stack.module}: {s['total_us'] / 1e3:.1f} ms self-time total, {s['modules']} modules")
        print("     packages: " + ", ".join(f"{p} {us / 1e3:.1f}" for p, us in s["packages"]) + " (ms)")
        print(f"     {'self us':>9} {'cumul us':>9}  heaviest modules")
        for name, (self_us, cum_us) in s["top"]:
            print(f"     {self_us:9d} {cum_us:9d}  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold-runs", type=int, default=5, help="fresh processes per case (default 5)")
    parser.add_argument("--warm-requests", type=int, default=300, help="timed requests per round (default 300)")
    parser.add_argument("--warm-rounds", type=int, default=3, help="worker processes per stack (default 3)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed requests before timing (default 20)")
    parser.add_argument("--import-runs", type=int, default=3, help="-X importtime runs per stack (default 3)")
    parser.add_argument(
        "--repeat", type=int, default=1, help="whole runs (cold + warm); the headline shows their ranges (default 1)"
    )
    parser.add_argument(
        "--no-instructions", action="store_true", help="skip the cold cases in CPU instructions (callgrind, ~1 min)"
    )
    parser.add_argument("--worker", choices=list(STACKS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    try:
        if args.worker:
            warm_worker(args.worker, args.warm_requests, args.warmup)
            return 0
        import serve_cold

        with local_dynamodb() as (engine, endpoint, client):
            DEPLOYED_ENV.update({"LAMBDA_MCP_TABLE_NAME": TABLE, "AWS_ENDPOINT_URL_DYNAMODB": endpoint})
            probes = {key: cold_once(STACKS[key], WIRES["modern"], probe=True)["second"] for key in (KIT, SDK)}
            session_id = new_session()  # also writes the .pyc files of the deployed path
            runs = []
            for i in range(args.repeat):
                if args.repeat > 1:
                    print(f"run {i + 1} of {args.repeat}...", file=sys.stderr, flush=True)
                runs.append(measure(args, session_id))
            env = {
                "instructions": None if args.no_instructions else bench_instructions(),  # before `items`
                "engine": engine,
                "endpoint": endpoint,
                "items": count_items(client),
                "probes": probes,
                "baseline_s": python_startup(args.cold_runs),
                "serve_profiles": {server.key: serve_cold.profile(server) for server in streaming_servers()},
            }
            imp = bench_importtime(args.import_runs)
    except BenchError as exc:
        print(f"BENCHMARK ERROR: {exc}", file=sys.stderr)
        return 1
    report(args, runs, imp, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
