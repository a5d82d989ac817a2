"""Cost benchmark: the AWS calls and bytes one request may cost at most, through the real Lambda handler.

Runs the HTTP handler (Mangum, API Gateway v2 events) with state in Amazon DynamoDB Local (or moto
server without Java) and the task queue on moto server's SQS, all on 127.0.0.1, and sends each kind of
request at the kit's limits (the largest client data, arguments, subscription set and batch it accepts)
and just past them. For each it prints the HTTP status, the AWS calls made and the bytes sent to and
received from AWS: the figures behind the "Bounded cost per request" table in docs/decisions.md.
Prints figures; asserts only that each request got the status it should.

`--tasks`: what one task costs on each task backend (docs/decisions.md "Tasks"). The same tools run through
`lambda-mcp dev --lambda` twice, once on the SQS worker and once as Lambda durable executions on the SDK's
local runner (`--task-backend durable`). For the SQS backend it counts the worker's runs (each one message:
SendMessage, ReceiveMessage, DeleteMessage); for the durable backend it reads each execution's history
(operations, and the bytes they recorded), and prices both at the public list prices.

`--init`: what a cold start costs now that Lambda bills the INIT phase (issue 40). The kit's and the SDK's
cold starts are measured here as bench/run.py measures them (fresh processes: import + first request
through the Lambda handler, the kit as deployed on DynamoDB Local), and priced per arm64 GB-second; then
with SnapStart, whose restore and cache charges replace the INIT's duration.

    .venv/bin/python bench/costs.py
    .venv/bin/python bench/costs.py --tasks
    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/costs.py --init [--runs 7]
"""

from __future__ import annotations

import base64
import json
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from tasks import _env, initialize_request  # noqa: E402  (the sibling benchmark's helpers)


class Meter:
    """AWS calls and bytes on the wire made by the HTTP handler (the main thread)."""

    def __init__(self) -> None:
        import boto3

        self.calls: Counter[str] = Counter()
        self.sent = 0
        self.received = 0
        boto3.setup_default_session()
        boto3.DEFAULT_SESSION.events.register("before-send", self._before_send)
        boto3.DEFAULT_SESSION.events.register("after-call", self._after_call)

    def _before_send(self, request: Any, event_name: str, **_: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            self.calls[event_name.removeprefix("before-send.")] += 1
            self.sent += len(request.body or b"")

    def _after_call(self, http_response: Any, **_: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            self.received += len(http_response.content or b"")

    def take(self) -> tuple[Counter[str], int, int]:
        taken = (self.calls, self.sent, self.received)
        self.calls, self.sent, self.received = Counter(), 0, 0
        return taken


def main() -> int:
    _env()
    sys.path.insert(0, str(ROOT / "src"))
    from lambda_mcp.local import aws
    from lambda_mcp.local.context import LambdaContext
    from lambda_mcp.local.gateways import http_api_event
    from lambda_mcp.protocol import limits

    storage = aws.start(None)
    queues = storage if storage.engine == "moto" else aws._start_moto(aws._free_port())
    rows: list[tuple[str, int, Counter[str], int, int]] = []
    try:
        aws.configure(storage.endpoint, "bench-costs")
        aws.configure_queues(queues.endpoint)
        meter = Meter()
        from lambda_mcp.entrypoints.http import handler

        base = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        session: dict[str, str] = {}

        def send(label: str, method: str, body: Any, expect: int, headers: dict[str, str] | None = None) -> str:
            raw = json.dumps(body).encode() if body is not None else b""
            all_headers = {**base, "host": "127.0.0.1", **session, **(headers or {})}
            meter.take()
            response = handler(http_api_event(method, "/mcp", all_headers, raw, "127.0.0.1"), LambdaContext())
            calls, sent, received = meter.take()
            text = response.get("body") or ""
            if response.get("isBase64Encoded"):
                text = base64.b64decode(text).decode()
            status = int(response["statusCode"])
            assert status == expect, f"{label}: {status} {text[:300]}"
            rows.append((label, status, calls, sent, received))
            session_id = (response.get("headers") or {}).get("mcp-session-id")
            if session_id and not session:
                session.update({"mcp-session-id": session_id})
            return text

        def request(method: str, params: dict[str, Any], rid: int = 7) -> dict[str, Any]:
            return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}

        # -- sessions ----------------------------------------------------------------------------
        padding = "x" * (limits.MAX_CLIENT_DATA_BYTES - 200)
        biggest = initialize_request({"experimental": {"pad": padding}, "tasks": {}, "elicitation": {}})
        send("initialize, client data at the cap (8 KB)", "POST", biggest, 200)
        session["mcp-protocol-version"] = "2025-11-25"
        over = initialize_request({"experimental": {"pad": "x" * 300_000}})
        send("initialize, 300 KB of client data (refused)", "POST", over, 200, {"mcp-session-id": ""})
        send("tools/list on a session", "POST", request("tools/list", {}), 200)
        long_uri = "test://template/" + "u" * (limits.MAX_SUBSCRIBED_URI_CHARS - 40) + "/data"
        for index in range(limits.MAX_SUBSCRIPTIONS - 1):
            send("(fill subscriptions)", "POST", request("resources/subscribe", {"uri": f"{long_uri}{index}"}), 200)
        rows[:] = [r for r in rows if r[0] != "(fill subscriptions)"]
        last = request("resources/subscribe", {"uri": f"{long_uri}-last"})
        send("resources/subscribe, the 32nd 512-char URI", "POST", last, 200)
        send("resources/subscribe, a 33rd (refused)", "POST", request("resources/subscribe", {"uri": "test://x"}), 200)
        send("request on that session (32 subscriptions)", "POST", request("ping", {}), 200)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "never-used"}}
        send("cancel of a request id never used", "POST", cancel, 202)
        send("GET stream poll (change feed)", "GET", None, 200, {"accept": "text/event-stream"})

        # -- tasks -------------------------------------------------------------------------------
        arguments = {"seconds": 0, "label": "y" * (limits.MAX_ARGUMENTS_BYTES - 100)}
        create = request("tools/call", {"name": "slow_compute", "arguments": arguments, "task": {}})
        text = send("task create, arguments at the cap (64 KB)", "POST", create, 200)
        task_id = json.loads(text[text.index("{") :].splitlines()[0])["result"]["task"]["taskId"]
        junk = request("tools/call", {"name": "slow_compute", "arguments": {"label": "z" * 380_000}, "task": {}})
        send("task create, 380 KB of arguments (refused)", "POST", junk, 200)
        send("tasks/get", "POST", request("tasks/get", {"taskId": task_id}), 200)
        send("tasks/list (one page)", "POST", request("tasks/list", {}), 200)

        # -- 2025-03-26 batches --------------------------------------------------------------------
        session.clear()
        old = initialize_request({})
        old["params"]["protocolVersion"] = "2025-03-26"
        send("initialize (2025-03-26)", "POST", old, 200)
        session["mcp-protocol-version"] = "2025-03-26"
        cancels = [{**cancel, "params": {"requestId": f"r{i}"}} for i in range(limits.MAX_BATCH)]
        send("batch of 32 cancels of unknown ids", "POST", cancels, 202)
        send("batch of 1,000 cancels (refused)", "POST", cancels * 32, 400)

        # -- 2026-07-28 -------------------------------------------------------------------------
        session.clear()
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        modern = request("tools/call", {"name": "test_simple_text", "arguments": {}, "_meta": meta})
        routing = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "test_simple_text"}
        send("2026-07-28 tools/call", "POST", modern, 200, routing)
    finally:
        if queues is not storage:
            queues.stop()
        storage.stop()

    print(f"state: {storage.engine}; limits: batch {limits.MAX_BATCH}, client data {limits.MAX_CLIENT_DATA_BYTES} B,")
    print(
        f"  arguments {limits.MAX_ARGUMENTS_BYTES} B, URI {limits.MAX_URI_CHARS} chars, {limits.MAX_SUBSCRIPTIONS} subs"
    )
    print(f"| {'request':46} | status | AWS calls | bytes sent | bytes received |")
    print(f"|{'-' * 48}|--------|-----------|------------|----------------|")
    for label, status, calls, sent, received in rows:
        named = ", ".join(f"{n.split('.')[-1]} {c}" for n, c in sorted(calls.items())) or "none"
        print(f"| {label:46} | {status:6} | {sum(calls.values()):9} | {sent:10,} | {received:14,} |  {named}")
    return 0


SQS_PER_MILLION = 0.40
"""SQS standard requests, $ per million (each 64 KB of a message is one)."""
DURABLE_OPS_PER_MILLION = 8.00
"""Lambda durable functions: $ per million durable operations."""
DURABLE_WRITTEN_PER_GB = 0.25
DURABLE_RETAINED_PER_GB_MONTH = 0.15
RETENTION_DAYS = 1
TASKS = [  # (label, tool, arguments, answers): the tools of tests/apps/checkpointed.py
    ("a 2 s sleep between two plain parts", "nap", {"seconds": 2}, None),
    ("step, 2 h sleep, step, a question, step", "pipeline", {}, {"go": {"action": "accept", "content": {"go": True}}}),
]


def task_costs() -> int:
    """One task of each kind on each backend: runs and requests (SQS), operations and bytes (durable)."""
    import os
    import re
    import subprocess
    import tempfile
    import time

    import boto3
    import httpx

    sys.path.insert(0, str(ROOT / "src"))
    sys.path.insert(0, str(ROOT))
    from lambda_mcp.local import aws
    from lambda_mcp.local.durable import FUNCTION
    from lambda_mcp.tasks.durable import execution_name
    from tests.integration.test_task_steps_local import _modern

    _env()
    rows = []
    for backend in ("sqs", "durable"):
        work = Path(tempfile.mkdtemp(prefix=f"costs-{backend}-"))
        port = aws._free_port()
        log = (work / "dev.log").open("w")
        args = [sys.executable, "-m", "lambda_mcp.cli", "dev", "tests/apps/checkpointed.py", "--lambda"]
        args += ["--port", str(port), "--task-backend", backend]
        env = {**os.environ, "LAMBDA_MCP_TEST_COUNTS": str(work / "counts")}
        server = subprocess.Popen(args, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            for _ in range(200):
                try:
                    httpx.get(url, timeout=1)
                    break
                except httpx.HTTPError:
                    time.sleep(0.1)
            for label, tool, arguments, answers in TASKS:
                task_id = _modern(url, "tools/call", {"name": tool, "arguments": {"label": "c", **arguments}})["taskId"]
                while (task := _modern(url, "tasks/get", {"taskId": task_id}))["status"] not in ("completed", "failed"):
                    if task["status"] == "input_required" and answers:
                        _modern(url, "tasks/update", {"taskId": task_id, "inputResponses": answers})
                    time.sleep(0.2)
                time.sleep(0.5)  # the run's log line follows its last write
                text = (work / "dev.log").read_text()
                if backend == "sqs":
                    runs = len(re.findall(rf'"message":"task run".*"task_id":"{re.escape(task_id)}"', text))
                    requests = 3 * runs
                    rows.append((label, backend, f"{runs} runs, {requests} SQS requests", requests * SQS_PER_MILLION))
                    continue
                runner = re.search(r"local runner, (http://127\.0\.0\.1:\d+)", text)
                assert runner is not None, text
                lam = boto3.client("lambda", endpoint_url=runner.group(1))
                name = execution_name(task_id)
                found = lam.list_durable_executions_by_function(FunctionName=FUNCTION, DurableExecutionName=name)[
                    "DurableExecutions"
                ]
                arn = found[0]["DurableExecutionArn"]
                events = lam.get_durable_execution_history(DurableExecutionArn=arn, IncludeExecutionData=True)["Events"]
                operations = len({e["Id"] for e in events if e.get("Id") and e["EventType"] != "InvocationCompleted"})
                written = sum(len(json.dumps(e, default=str)) for e in events)
                gb = written / 1e9
                dollars = operations * DURABLE_OPS_PER_MILLION + 1e6 * gb * (
                    DURABLE_WRITTEN_PER_GB + DURABLE_RETAINED_PER_GB_MONTH * RETENTION_DAYS / 30
                )
                invocations = sum(1 for e in events if e["EventType"] == "InvocationCompleted")
                rows.append(
                    (label, backend, f"{invocations} invocations, {operations} operations, {written:,} B", dollars)
                )
        finally:
            server.terminate()
            server.wait(timeout=30)
            log.close()
    print("| task | backend | what it took | $ per million tasks (queue or durable only) |")
    print("|---|---|---|---|")
    for label, backend, took, dollars in rows:
        print(f"| {label} | {backend} | {took} | {dollars:,.2f} |")
    print("(DynamoDB reads and writes, and Lambda compute, are about the same on both and not counted here.)")
    return 0


# Public list prices, US East (N. Virginia), read 2026-11 from https://aws.amazon.com/lambda/pricing/ (the
# SnapStart rates as the page and the AWS Price List API give them for Python and .NET functions).
ARM64_PER_GB_SECOND = 0.0000133334
"""Lambda duration on arm64 (Graviton), the first 7.5 billion GB-seconds a month. Since August 1, 2025 the
INIT phase of on-demand ZIP functions on managed runtimes is billed at this rate too, as the INVOKE phase
is ("AWS Lambda standardizes billing for INIT Phase", AWS Compute Blog:
https://aws.amazon.com/blogs/compute/aws-lambda-standardizes-billing-for-init-phase)."""
SNAPSTART_RESTORE_PER_GB = 0.0001397998
"""SnapStart: $ per GB of the function's memory restored, each time an execution environment is restored
from the snapshot (instead of an INIT). The restore's own duration is not billed; the after-restore hooks
and the first request are, at the duration rate (`Billed Restore Duration` in the REPORT line)."""
SNAPSTART_CACHE_PER_GB_SECOND = 0.0000015046
"""SnapStart: $ per GB-second a published version's snapshot stays cached (3 hours at least)."""
MEMORY_GB = 1.0
"""template.yaml's MemorySize (1024 MB) for the HTTP function."""
MONTH_SECONDS = 730 * 3600


def init_costs(runs: int) -> int:
    """The kit's and the SDK's cold starts, measured here, priced per million cold starts."""
    import statistics

    import run  # bench/run.py's stacks, requests and cold child

    cases = [(run.KIT, "modern"), (run.KIT, "initialize"), (run.SDK, "modern"), (run.SDK, "initialize")]
    seconds: dict[tuple[str, str], list[tuple[float, float]]] = {case: [] for case in cases}
    with run.local_dynamodb() as (engine, endpoint, _client):
        run.DEPLOYED_ENV.update({"LAMBDA_MCP_TABLE_NAME": run.TABLE, "AWS_ENDPOINT_URL_DYNAMODB": endpoint})
        for key, wire in cases:  # untimed: writes any missing bytecode
            run.cold_once(run.STACKS[key], run.WIRES[wire])
        for i in range(runs):
            for key, wire in cases if i % 2 == 0 else cases[::-1]:
                result = run.cold_once(run.STACKS[key], run.WIRES[wire])
                seconds[(key, wire)].append((result["import_s"], result["first_call_s"]))
    per_million = 1e6 * MEMORY_GB
    restore = SNAPSTART_RESTORE_PER_GB * per_million
    cache = SNAPSTART_CACHE_PER_GB_SECOND * MEMORY_GB * MONTH_SECONDS
    print(f"Cold starts measured here ({engine}; median of {runs}), priced at {MEMORY_GB * 1024:.0f} MB on arm64:")
    print(f"${ARM64_PER_GB_SECOND:.10f} per GB-s (the INIT billed too since 2025-08-01); SnapStart")
    restored, cached = f"{SNAPSTART_RESTORE_PER_GB:.10f}", f"{SNAPSTART_CACHE_PER_GB_SECOND:.10f}"
    print(f"${restored} per GB restored, ${cached} per GB-s cached (us-east-1).")
    print()
    print(
        "| cold start | INIT (import) | 1st request | $ per million: INIT | INIT + 1st request | SnapStart restore* |"
    )
    print("|---|---|---|---|---|---|")
    totals: dict[tuple[str, str], float] = {}
    for key, wire in cases:
        init = statistics.median(i for i, _ in seconds[(key, wire)])
        first = statistics.median(f for _, f in seconds[(key, wire)])
        totals[(key, wire)] = init + first
        dollars = [s * ARM64_PER_GB_SECOND * per_million for s in (init, init + first)]
        label = f"{key}, {'2026 tools/call' if wire == 'modern' else 'legacy initialize'}"
        print(
            f"| {label} | {init * 1e3:.0f} ms | {first * 1e3:.0f} ms | {dollars[0]:.2f} | {dollars[1]:.2f}"
            f" | {restore:.2f} |"
        )
    for wire in ("modern", "initialize"):
        ratio = totals[(run.KIT, wire)] / totals[(run.SDK, wire)]
        print(f"lambda-mcp / SDK, INIT + 1st request ({wire}): {ratio:.3f}x the cost")
    print("* and the duration of the after-restore hooks and the first request (billed; bench/snapstart.py")
    print("  measures restore to first answer under an emulated restore)")
    print(
        f"SnapStart: {restore:.2f} $ per million restores at {MEMORY_GB:g} GB, the price of"
        f" {SNAPSTART_RESTORE_PER_GB / ARM64_PER_GB_SECOND:.1f} s of INIT at any memory size: it saves money"
        " only where the INIT takes longer than that, and buys latency below it."
    )
    print(f"  plus {cache:.2f} $ a month per published version's cached snapshot ({MEMORY_GB:g} GB, 730 h).")
    print("Local figures: Lambda at 1024 MB has about 0.58 of a vCPU, so its INIT takes longer than here;")
    print("the ratios carry over better than the dollars (the REPORT line's Init Duration gives yours).")
    return 0


if __name__ == "__main__":
    if "--init" in sys.argv:
        runs = sys.argv[sys.argv.index("--runs") + 1] if "--runs" in sys.argv else "7"
        raise SystemExit(init_costs(int(runs)))
    raise SystemExit(task_costs() if "--tasks" in sys.argv else main())
