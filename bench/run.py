"""Benchmark lambda-mcp against the official MCP Python SDK behind AWS Lambda.

Prints figures; it is not a test. Both stacks serve the same one-tool app
(`bench/apps/`) through their Lambda handler fed API Gateway v2 events:

* cold init: fresh `python -c` processes, alternating stacks, timing the
  import of the entrypoint plus the first `tools/call`;
* warm: one process per stack per round, alternating, timing a few hundred
  `tools/call`s over direct ASGI (both stacks) and through Mangum (lambda-mcp
  only: the SDK's session manager refuses a second Mangum invocation);
* import: `python -X importtime` totals and the heaviest modules.

Every response is checked (HTTP 200, JSON-RPC result with `content` = "3");
any failure stops the run with a nonzero exit. Missing a target does not.

Usage: python bench/run.py [--cold-runs N] [--warm-requests M] [--warm-rounds R]
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
APPS = BENCH / "apps"
DOMAIN = "abc123defg.execute-api.us-east-1.amazonaws.com"
TARGETS = {"cold": 0.20, "warm": 0.10}  # issue 14 (issue 2 set 0.35 and 0.25)

ASGIApp = Callable[[MutableMapping[str, Any], Any, Any], Awaitable[None]]


class BenchError(Exception):
    """A response or subprocess that the benchmark must not silently measure."""


# --- wires ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wire:
    """One way of sending `tools/call add(1, 2)` without any prior handshake."""

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
        "2026-07-28 per-request envelope (mcp-method/mcp-name headers, _meta), no initialize",
    ),
    "legacy": _make_wire(
        "legacy",
        "2025-11-25",
        False,
        "2025-11-25 plain tools/call on a stateless server, no initialize",
    ),
}
HEADLINE_WIRE = "modern"
INITIALIZE = Wire(
    "initialize",
    "2025-11-25 initialize (creates a session: one conditional PutItem when state is in DynamoDB)",
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
)


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


def mangum_status_body(resp: dict[str, Any]) -> tuple[int, str]:
    """The status and decoded body of a Mangum API Gateway response."""
    body = resp.get("body") or ""
    if resp.get("isBase64Encoded"):
        body = base64.b64decode(body).decode()
    return int(resp["statusCode"]), body


# --- stacks --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stack:
    """How to import one stack's Lambda entrypoint and drive its ASGI app."""

    key: str
    module: str
    env: dict[str, str]
    mangum_warm: bool  # can its Mangum handler serve more than one invocation?
    asgi_lifespan: bool  # must the ASGI lifespan be entered before serving?


STACKS = {
    "lambda-mcp": Stack(
        "lambda-mcp",
        "lambda_mcp.entrypoints.http",
        # Allowed host from config, as for the SDK: direct ASGI calls carry no
        # Lambda event for lambda-mcp to take `requestContext.domainName` from.
        {
            "LAMBDA_MCP_APP": f"{APPS / 'lambda_mcp_app.py'}:app",
            "LAMBDA_MCP_ALLOWED_HOSTS": DOMAIN,
            "LAMBDA_MCP_AUTH": "none",
        },
        mangum_warm=True,
        asgi_lifespan=False,
    ),
    "lambda-mcp-bare": Stack(
        "lambda-mcp-bare",
        "lambda_mcp_bare",
        {
            "LAMBDA_MCP_APP": f"{APPS / 'lambda_mcp_app.py'}:app",
            "LAMBDA_MCP_ALLOWED_HOSTS": DOMAIN,
            "LAMBDA_MCP_AUTH": "none",
        },
        mangum_warm=True,
        asgi_lifespan=False,
    ),
    "sdk": Stack(
        "sdk",
        "sdk_app",
        {"BENCH_ALLOWED_HOSTS": DOMAIN},
        mangum_warm=False,
        asgi_lifespan=True,
    ),
}


def child_env(stack: Stack) -> dict[str, str]:
    """Environment for a stack's subprocess: fake Lambda variables, `src` and `bench/apps` on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAMBDA_MCP_", "PYTHON"))}
    env |= {
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(APPS)]),
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "AWS_LAMBDA_FUNCTION_NAME": "bench",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
    }
    return env | stack.env


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


# --- subprocess helpers --------------------------------------------------------------------


def run_child(stack: Stack, args: list[str]) -> tuple[str, str, float]:
    """Run `python ARGS` for a stack; return stdout, stderr and spawn-to-exit seconds."""
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


def median(xs: list[float]) -> float:
    return statistics.median(xs)


# --- cold ----------------------------------------------------------------------------------

COLD_SNIPPET = """\
import time
_t0 = time.perf_counter()
import {module} as _entry
_t1 = time.perf_counter()
_resp = _entry.handler({event!r}, FakeLambdaContext())
_t2 = time.perf_counter()
import json
_out = {{"import_s": _t1 - _t0, "first_call_s": _t2 - _t1,
         "status": int(_resp["statusCode"]), "resp": {{**_resp, "statusCode": int(_resp["statusCode"])}}}}
if {probe}:
    try:
        _r2 = _entry.handler({event!r}, FakeLambdaContext())
        _out["second"] = "served: status %s" % int(_r2["statusCode"])
    except BaseException as exc:
        _out["second"] = "raised %s: %s" % (type(exc).__name__, (str(exc).strip().splitlines() or [""])[-1])
print(json.dumps(_out))
"""

CTX_SNIPPET = inspect.getsource(FakeLambdaContext)  # the cold child defines it too


def cold_once(
    stack: Stack, wire: Wire, probe: bool = False, check: Callable[[int, str], str | None] = check_response
) -> dict[str, Any]:
    """One fresh process: import the entrypoint, serve the first request (`tools/call` by default), check it."""
    code = COLD_SNIPPET.format(module=stack.module, event=api_gw_v2_event(wire), probe=probe)
    out, _err, wall = run_child(stack, ["-c", CTX_SNIPPET + code])
    result = json.loads(out.strip().splitlines()[-1])
    status, body = mangum_status_body(result["resp"])
    if problem := check(status, body):
        raise BenchError(
            f"{stack.key} cold first call on {wire.key} wire: {problem}\n"
            f"request: {wire.headers} {wire.body}\nresponse: {result['resp']}"
        )
    result["wall_s"] = wall
    return result


def python_startup(runs: int) -> float:
    """Median spawn-to-exit seconds of `python -c pass` (interpreter baseline)."""
    walls = [run_child(STACKS["sdk"], ["-c", "pass"])[2] for _ in range(runs)]
    return median(walls)


def bench_cold(runs: int) -> dict[str, Any]:
    wire = WIRES[HEADLINE_WIRE]
    probes = {key: cold_once(stack, wire, probe=True)["second"] for key, stack in STACKS.items()}
    samples: dict[str, list[dict[str, Any]]] = {key: [] for key in STACKS}
    order = list(STACKS)
    for i in range(runs):
        for key in order if i % 2 == 0 else order[::-1]:
            samples[key].append(cold_once(STACKS[key], wire))
    stats: dict[str, Any] = {"probes": probes, "baseline_s": python_startup(runs)}
    for key, rows in samples.items():
        stats[key] = {field: median([row[field] for row in rows]) for field in ("import_s", "first_call_s", "wall_s")}
        stats[key]["init_s"] = median([row["import_s"] + row["first_call_s"] for row in rows])
    return stats


def bench_cold_dynamodb(runs: int) -> dict[str, Any]:
    """Cold init of lambda-mcp with its DynamoDB adapters configured, against a local AWS API on 127.0.0.1.

    Two first requests: a modern `tools/call` (stateless: no storage call, boto3 never imported)
    and a legacy `initialize` (imports boto3, builds the client, one conditional PutItem).
    """
    sys.path.insert(0, str(REPO / "src"))
    from lambda_mcp.local import aws

    local = aws.start(None)
    try:
        env = {
            "LAMBDA_MCP_TABLE_NAME": "bench-state",
            "AWS_ENDPOINT_URL_DYNAMODB": local.endpoint,
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
        }
        import boto3

        from lambda_mcp.storage.dynamodb import create_table

        credentials = {"aws_access_key_id": "bench", "aws_secret_access_key": "bench"}
        client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=local.endpoint, **credentials)
        create_table(client, "bench-state")
        base = STACKS["lambda-mcp"]
        stack = Stack("lambda-mcp+dynamodb", base.module, {**base.env, **env}, True, False)
        stats: dict[str, Any] = {"engine": local.engine}
        for name, wire, check in (
            ("tools_call", WIRES[HEADLINE_WIRE], check_response),
            ("initialize", INITIALIZE, check_initialize),
        ):
            rows = [cold_once(stack, wire, check=check) for _ in range(runs)]
            stats[name] = {f: median([r[f] for r in rows]) for f in ("import_s", "first_call_s", "wall_s")}
            stats[name]["init_s"] = median([r["import_s"] + r["first_call_s"] for r in rows])
        return stats
    finally:
        local.stop()


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


async def asgi_call(app: ASGIApp, scope: dict[str, Any], body: bytes) -> tuple[int, bytes]:
    """One direct ASGI request, with Mangum's receive semantics (body, then disconnect after the reply)."""
    done = asyncio.Event()
    pending = [{"type": "http.request", "body": body, "more_body": False}]
    status = 0
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
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                done.set()

    await app(dict(scope), receive, send)
    return status, b"".join(chunks)


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


class Unsupported(Exception):
    """A non-headline wire that a stack answers with an error."""


def _verify(stack: Stack, wire: Wire, mode: str, status: int, body: str | bytes) -> None:
    if problem := check_response(status, body):
        detail = f"{stack.key} {mode} on {wire.key} wire: {problem}\nrequest: {wire.headers} {wire.body}\n"
        detail += f"response: {status} {body!r}"
        raise (BenchError if wire.key == HEADLINE_WIRE else Unsupported)(detail)


def warm_mangum(stack: Stack, handler: Any, wire: Wire, n: int, warmup: int) -> list[float]:
    event, ctx, times = api_gw_v2_event(wire), FakeLambdaContext(), []
    for i in range(warmup + n):
        start = time.perf_counter()
        resp = handler(event, ctx)
        elapsed = time.perf_counter() - start
        _verify(stack, wire, "mangum", *mangum_status_body(resp))
        if i >= warmup:
            times.append(elapsed)
    return times


async def warm_asgi(stack: Stack, app: ASGIApp, wire: Wire, n: int, warmup: int) -> list[float]:
    scope, body, times = asgi_scope(wire), wire.body.encode(), []
    for i in range(warmup + n):
        start = time.perf_counter()
        status, out = await asgi_call(app, scope, body)
        elapsed = time.perf_counter() - start
        _verify(stack, wire, "asgi", status, out)
        if i >= warmup:
            times.append(elapsed)
    return times


async def warm_asgi_all(stack: Stack, app: ASGIApp, n: int, warmup: int) -> dict[str, float | str]:
    """Every wire over direct ASGI, inside one lifespan (the SDK's can be entered only once)."""
    out: dict[str, float | str] = {}
    async with AsgiLifespan(app) if stack.asgi_lifespan else contextlib.nullcontext():
        for wire in WIRES.values():
            try:
                out[f"asgi/{wire.key}"] = median(await warm_asgi(stack, app, wire, n, warmup))
            except Unsupported as exc:
                out[f"asgi/{wire.key}"] = str(exc)
    return out


def warm_worker(stack_key: str, n: int, warmup: int) -> None:
    """Worker entry: import a stack, time `n` calls per mode and wire, print JSON medians."""
    stack = STACKS[stack_key]
    handler = importlib.import_module(stack.module).handler
    app: ASGIApp | None = getattr(handler, "app", None) or getattr(importlib.import_module(stack.module), "app", None)
    if app is None:
        raise BenchError(f"{stack.key}: handler {handler!r} exposes no ASGI `.app`")
    out: dict[str, float | str] = {}
    if stack.mangum_warm:
        for wire in WIRES.values():
            try:
                out[f"mangum/{wire.key}"] = median(warm_mangum(stack, handler, wire, n, warmup))
            except Unsupported as exc:
                out[f"mangum/{wire.key}"] = str(exc)
    loop = asyncio.new_event_loop()  # private loop: Mangum keeps using its own
    try:
        out |= loop.run_until_complete(warm_asgi_all(stack, app, n, warmup))
    finally:
        loop.close()
    print(json.dumps(out))


def bench_warm(rounds: int, n: int, warmup: int) -> dict[str, dict[str, Any]]:
    samples: dict[str, list[dict[str, Any]]] = {key: [] for key in STACKS}
    order = list(STACKS)
    for i in range(rounds):
        for key in order if i % 2 == 0 else order[::-1]:
            args = [
                str(Path(__file__)),
                "--worker",
                key,
                "--warm-requests",
                str(n),
                "--warmup",
                str(warmup),
            ]
            out, _err, _wall = run_child(STACKS[key], args)
            samples[key].append(json.loads(out.strip().splitlines()[-1]))
    stats: dict[str, dict[str, Any]] = {}
    for key, rows in samples.items():
        stats[key] = {}
        for metric, first in rows[0].items():
            stats[key][metric] = first if isinstance(first, str) else median([r[metric] for r in rows])
    return stats


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


def bench_importtime(runs: int) -> dict[str, dict[str, Any]]:
    baseline = set(parse_importtime(run_child(STACKS["sdk"], ["-X", "importtime", "-c", "pass"])[1]))
    stats: dict[str, dict[str, Any]] = {}
    for key, stack in STACKS.items():
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


def ratio(a: float, b: float) -> str:
    return f"{a / b:.3f}x"


def report(
    args: argparse.Namespace,
    cold: dict[str, Any],
    warm: dict[str, Any],
    imp: dict[str, Any],
    cold_ddb: dict[str, Any],
) -> None:
    lm, sdk = "lambda-mcp", "sdk"
    print("lambda-mcp vs official MCP Python SDK (mcp 2.3.0 MCPServer) behind AWS Lambda (Mangum)")
    print(f"python {sys.version.split()[0]}, {sys.platform}; API Gateway v2 events, host = {DOMAIN}")
    print()
    print("Wires (headline figures use the first; a wire a stack rejects is listed as NOTE):")
    for wire in WIRES.values():
        print(f"  {wire.key:7} {wire.description}")
    print()

    print(f"== Cold init ({args.cold_runs} fresh processes per stack, alternating, medians; {HEADLINE_WIRE} wire;")
    print("   one untimed run per stack first, which also tries a second invocation)")
    print(f"   python -c pass, spawn to exit: {cold['baseline_s'] * 1e3:8.1f} ms")
    print(f"   {'':34} {lm:>12} {sdk:>12} {'ratio':>8}")
    for field, label in (
        ("import_s", "import entrypoint"),
        ("first_call_s", "first tools/call (handler)"),
        ("init_s", "import + first call (in-process)"),
        ("wall_s", "process spawn to exit"),
    ):
        a, b = cold[lm][field], cold[sdk][field]
        print(f"   {label:34} {a * 1e3:9.1f} ms {b * 1e3:9.1f} ms {ratio(a, b):>8}")
    print("   second Mangum invocation in the same process:")
    for key in STACKS:
        print(f"     {key:10} {cold['probes'][key]}")
    print()

    print(f"== Cold init with the DynamoDB adapters configured ({args.cold_runs} fresh processes each, medians;")
    print(f"   state table on {cold_ddb['engine']} at 127.0.0.1; the SDK column is its cold modern tools/call above)")
    print(f"   {'':50} {lm + '+ddb':>14} {sdk:>12} {'ratio':>8}")
    for name, label in (("tools_call", "modern tools/call (0 calls)"), ("initialize", "legacy initialize (1 PutItem)")):
        for field, what in (("import_s", "import"), ("init_s", "import + 1st request")):
            a, b = cold_ddb[name][field], cold[sdk][field]
            print(f"   {label + ': ' + what:50} {a * 1e3:11.1f} ms {b * 1e3:9.1f} ms {ratio(a, b):>8}")
    print()

    print(f"== Warm per-request ({args.warm_rounds} rounds x {args.warm_requests} tools/call per stack,")
    print(f"   one process per stack per round, alternating, {args.warmup} untimed warm-up calls; median of medians)")
    print("   asgi   = the handler's ASGI app called directly (same scope/receive/send for both stacks)")
    print("   mangum = the Lambda handler called with the API Gateway v2 event")
    print("   The SDK is measured over ASGI only: under Mangum its session manager's run() is")
    print("   entered per invocation and raises on the second one (see the cold section).")
    print(f"   {'':16} {lm:>12} {sdk:>12} {'ratio':>8}")
    notes: list[str] = []
    for wire in WIRES:
        for mode in ("asgi", "mangum"):
            metric = f"{mode}/{wire}"
            a, b = warm[lm].get(metric), warm[sdk].get(metric)
            cell_a = f"{a * 1e6:9.1f} us" if isinstance(a, float) else f"{'n/a':>12}"
            cell_b = f"{b * 1e6:9.1f} us" if isinstance(b, float) else f"{'n/a':>12}"
            r = ratio(a, b) if isinstance(a, float) and isinstance(b, float) else "-"
            print(f"   {metric:16} {cell_a} {cell_b} {r:>8}")
            for key, value in ((lm, a), (sdk, b)):
                if isinstance(value, str):
                    notes.append(f"{key} {metric} unsupported: {value}")
    for note in notes:
        print("   NOTE " + note.replace("\n", "\n        "))
    print()

    print(f"== Import time (python -X importtime -c 'import <entrypoint>', median of {args.import_runs} runs,")
    print("   modules imported by `python -c pass` excluded; the app module load is included)")
    for key, stack in STACKS.items():
        s = imp[key]
        print(f"   {key}: import {stack.module}: {s['total_us'] / 1e3:.1f} ms self-time total, {s['modules']} modules")
        print("     packages: " + ", ".join(f"{p} {us / 1e3:.1f}" for p, us in s["packages"]) + " (ms)")
        print(f"     {'self us':>9} {'cumul us':>9}  heaviest modules")
        for name, (self_us, cum_us) in s["top"]:
            print(f"     {self_us:9d} {cum_us:9d}  {name}")
    print()

    rows: list[tuple[str, str, str, str, str, str]] = []

    def row(metric: str, a: float, b: float, unit: str, scale: float, target: float | None) -> None:
        r = a / b
        met = "-" if target is None else ("yes" if r <= target else "NO")
        tgt = "-" if target is None else f"<= {target:.2f}x"
        rows.append(
            (
                metric,
                f"{a * scale:.1f} {unit}",
                f"{b * scale:.1f} {unit}",
                f"{r:.3f}x",
                tgt,
                met,
            )
        )

    w = f"asgi/{HEADLINE_WIRE}"
    row(
        "cold init: import + 1st call",
        cold[lm]["init_s"],
        cold[sdk]["init_s"],
        "ms",
        1e3,
        TARGETS["cold"],
    )
    row(
        "cold init, DynamoDB configured",
        cold_ddb["tools_call"]["init_s"],
        cold[sdk]["init_s"],
        "ms",
        1e3,
        TARGETS["cold"],
    )
    row(
        "cold init + 1st initialize (DDB)",
        cold_ddb["initialize"]["init_s"],
        cold[sdk]["init_s"],
        "ms",
        1e3,
        None,
    )
    row(
        "warm request (direct ASGI)",
        warm[lm][w],
        warm[sdk][w],
        "us",
        1e6,
        TARGETS["warm"],
    )
    row(
        "cold: import entrypoint",
        cold[lm]["import_s"],
        cold[sdk]["import_s"],
        "ms",
        1e3,
        None,
    )
    row(
        "cold: process spawn to exit",
        cold[lm]["wall_s"],
        cold[sdk]["wall_s"],
        "ms",
        1e3,
        None,
    )
    row(
        "importtime self total",
        imp[lm]["total_us"],
        imp[sdk]["total_us"],
        "ms",
        1e-3,
        None,
    )
    mangum = warm[lm].get(f"mangum/{HEADLINE_WIRE}")
    header = ("metric", lm, "SDK", "ratio", "target", "met?")
    table = [header, *rows]
    if isinstance(mangum, float):
        table.append(
            (
                "warm request via Mangum",
                f"{mangum * 1e6:.1f} us",
                "n/a (raises)",
                "-",
                "-",
                "-",
            )
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    print(f"== Summary ({HEADLINE_WIRE} wire; ratio = lambda-mcp / SDK, lower is better)")
    for i, r in enumerate(table):
        print("   " + "  ".join(c.ljust(widths[j]) if j == 0 else c.rjust(widths[j]) for j, c in enumerate(r)))
        if i == 0:
            print("   " + "  ".join("-" * wd for wd in widths))
    bare = "lambda-mcp-bare"
    bare_mangum = warm[bare].get(f"mangum/{HEADLINE_WIRE}")
    print()
    print("== What observability adds (Powertools Logger + Metrics: a JSON log line with EMF per request)")
    added_cold = (cold[lm]["init_s"] - cold[bare]["init_s"]) * 1e3
    print(
        f"   cold init: {cold[lm]['init_s'] * 1e3:.1f} ms vs {cold[bare]['init_s'] * 1e3:.1f} ms without:"
        f" {added_cold:+.1f} ms (goal <= 15 ms)"
    )
    if isinstance(mangum, float) and isinstance(bare_mangum, float):
        added_warm = (mangum - bare_mangum) * 1e6
        print(
            f"   warm request via Mangum: {mangum * 1e6:.1f} us vs {bare_mangum * 1e6:.1f} us without:"
            f" {added_warm:+.1f} us (goal <= 50 us)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold-runs", type=int, default=7, help="fresh processes per stack (default 7)")
    parser.add_argument(
        "--warm-requests",
        type=int,
        default=300,
        help="timed calls per round (default 300)",
    )
    parser.add_argument(
        "--warm-rounds",
        type=int,
        default=5,
        help="worker processes per stack (default 5)",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=20,
        help="untimed calls before timing (default 20)",
    )
    parser.add_argument(
        "--import-runs",
        type=int,
        default=5,
        help="-X importtime runs per stack (default 5)",
    )
    parser.add_argument("--worker", choices=list(STACKS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    try:
        if args.worker:
            warm_worker(args.worker, args.warm_requests, args.warmup)
            return 0
        cold = bench_cold(args.cold_runs)
        cold_ddb = bench_cold_dynamodb(args.cold_runs)
        warm = bench_warm(args.warm_rounds, args.warm_requests, args.warmup)
        imp = bench_importtime(args.import_runs)
    except BenchError as exc:
        print(f"BENCHMARK ERROR: {exc}", file=sys.stderr)
        return 1
    report(args, cold, warm, imp, cold_ddb)
    return 0


if __name__ == "__main__":
    sys.exit(main())
