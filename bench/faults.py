"""Tasks under randomized faults: nothing lost, nothing stuck, nothing run twice that could run once.

Everything runs on 127.0.0.1, on the real wire: state in Amazon DynamoDB Local and the task queue on
moto server's SQS, both behind fault-injecting proxies (tests/support/fault_proxy.py) that throttle,
answer 500, or apply a write and then answer 500 (DynamoDB's ambiguous 5xx) at random; clients create
tasks through the real HTTP endpoint (the buffered transport, both eras) and retry on 503 as told; the
real worker handler runs them from a local event source that redelivers what it did not delete, the
harness kills some runs mid-way (the worker dies: nothing in the kit sees it), sends duplicate
messages, answers the tasks that ask, and runs the sweeper every second.

Timings are scaled down: the worker's timeout is 3 s (a lease 3.3 s), the visibility timeout 4 s.

It reports every task's end: started, completed, failed (a tool's own failure: by design, the `flaky`
jobs), runs per task, extra runs by cause, and lost (no final state `tasks/get` returns) and stuck
(still working or parked at the end). Extra runs are explained only by a kill of the harness or by a
storage fault that outlasted the retries of the write recording a run's end; anything else is counted
as `unexplained`. It exits 0 unless the harness itself fails.

    .venv/bin/python bench/faults.py [--tasks 1000] [--fault-rate 0.02] [--kill-rate 0.05] [--seed 7] [--log FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import random
import secrets
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._local import start_dynamodb_local  # noqa: E402
from lambda_mcp import Context, MCPApp, ToolError  # noqa: E402

TASKS_CAPS = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}
FAULTY = {
    "dynamodb": ["PutItem", "UpdateItem", "GetItem", "Query"],
    "sqs": ["SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage"],
}
KINDS = ["throttled", "server error", "written, then 500"]


@dataclass
class Ledger:
    """What the harness saw of each job (by label): its runs, and why a run might be an extra one."""

    runs: Counter[str] = field(default_factory=Counter)
    ended: Counter[str] = field(default_factory=Counter)
    """Runs that reached the end of a round: the tool returned (or failed by design), or its question parked it."""
    killed: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


LEDGER = Ledger()
KILL_RATE = [0.05]


class WorkerKilled(BaseException):
    """The worker process dying mid-run (the harness's kill): nothing in the kit catches it."""


def _app() -> Any:
    app = MCPApp("faults-bench")

    async def _step(label: str) -> None:
        await asyncio.sleep(random.uniform(0.0, 0.02))
        if random.random() < KILL_RATE[0]:
            with LEDGER.lock:
                LEDGER.killed[label] += 1
            raise WorkerKilled(label)

    def _run(label: str) -> None:
        with LEDGER.lock:
            LEDGER.runs[label] += 1

    def _ended(label: str) -> None:
        with LEDGER.lock:
            LEDGER.ended[label] += 1

    @app.tool(task_support="required")
    async def job(label: str) -> str:
        _run(label)
        await _step(label)
        _ended(label)
        return f"{label} done"

    @app.tool(task_support="required")
    async def chatty(ctx: Context, label: str) -> str:
        _run(label)
        for step in range(3):
            await ctx.info(f"{label} {step}")
            await _step(label)
        _ended(label)
        return f"{label} told"

    @app.tool(task_support="required")
    async def flaky(label: str) -> str:
        _run(label)
        await _step(label)
        _ended(label)
        raise ToolError(f"{label} failed by design")

    @app.tool(task_support="required")
    async def asks(ctx: Context, label: str) -> str:
        _run(label)
        await _step(label)
        try:
            answer = await ctx.elicit("Go on?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="go")
        except BaseException:  # the question suspends the run: it ends its round here (the kit parks it)
            _ended(label)
            raise
        await _step(label)
        _ended(label)
        return f"{label} ok={(answer.get('content') or {}).get('ok')}"

    return app


class Source:
    """The SQS event source: receive (batch of 1), invoke the worker handler, delete what it did not report
    as failed; a killed invocation leaves its message for redelivery. `concurrency` threads."""

    def __init__(self, sqs: Any, queue_url: str, dlq_url: str, handler: Any, concurrency: int) -> None:
        from lambda_mcp.local.poller import queue_arn

        self.sqs, self.queue_url, self.dlq_url, self.handler = sqs, queue_url, dlq_url, handler
        self.arns = {queue_url: queue_arn(queue_url), dlq_url: queue_arn(dlq_url)}
        self.stop_event = threading.Event()
        self.threads = [threading.Thread(target=self._poll, args=(queue_url,), daemon=True) for _ in range(concurrency)]
        self.threads.append(threading.Thread(target=self._poll, args=(dlq_url,), daemon=True))

    def start(self) -> Source:
        for thread in self.threads:
            thread.start()
        return self

    def stop(self) -> None:
        self.stop_event.set()
        for thread in self.threads:
            thread.join(timeout=10)

    def _poll(self, url: str) -> None:
        from lambda_mcp.local.context import LambdaContext
        from lambda_mcp.local.poller import sqs_event

        while not self.stop_event.is_set():
            try:
                got = self.sqs.receive_message(
                    QueueUrl=url, MaxNumberOfMessages=1, WaitTimeSeconds=1, AttributeNames=["ApproximateReceiveCount"]
                )
            except Exception:
                time.sleep(0.2)
                continue
            messages = got.get("Messages") or []
            if not messages:
                continue
            try:
                response = self.handler(sqs_event(messages, self.arns[url]), LambdaContext(3000))
                failed = {f["itemIdentifier"] for f in (response or {}).get("batchItemFailures", [])}
            except BaseException:  # killed, or the invocation failed: the message comes back
                failed = {m["MessageId"] for m in messages}
            for message in messages:
                if message["MessageId"] not in failed:
                    with contextlib.suppress(Exception):
                        self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--fault-rate", type=float, default=0.02, help="chance of each kind of fault per call")
    parser.add_argument("--kill-rate", type=float, default=0.05, help="chance a run is killed at each step")
    parser.add_argument("--duplicates", type=float, default=0.1, help="share of tasks sent a second message")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=900, help="seconds to wait for every task to end")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--log", help="write the kit's log lines (JSON) to this file, to follow a task")
    args = parser.parse_args()
    random.seed(args.seed)
    KILL_RATE[0] = args.kill_rate
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    with contextlib.ExitStack() as stack:
        report = asyncio.run(_run(args, stack))
    print(report)


async def _run(args: argparse.Namespace, stack: contextlib.ExitStack) -> str:
    import boto3
    from botocore.retries.standard import ExponentialBackoff
    from moto.server import ThreadedMotoServer

    from lambda_mcp.config import Settings
    from lambda_mcp.kit import build_kit
    from lambda_mcp.storage.dynamodb import create_table
    from lambda_mcp.worker import handle_event
    from tests.support.client import MCPTestClient
    from tests.support.fault_proxy import FaultProxy
    from tests.support.processes import free_port
    from tests.support.queues import create_task_queues

    ExponentialBackoff.delay_amount = lambda self, context: 0.005  # type: ignore[method-assign]
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto server's access log
    kit_log = logging.getLogger("lambda_mcp")  # the kit's warnings about injected faults: a file, or nowhere
    kit_log.setLevel(logging.DEBUG if args.log else logging.CRITICAL)
    if args.log:
        kit_log.addHandler(logging.FileHandler(args.log))
        kit_log.propagate = False
    dynamodb = start_dynamodb_local(stack)
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    moto.start()
    stack.callback(moto.stop)
    sqs_url = "http://{}:{}".format(*moto.get_host_and_port())
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"], os.environ["AWS_ENDPOINT_URL_SQS"] = dynamodb, sqs_url
    table = f"faults-{secrets.token_hex(4)}"
    create_table(boto3.client("dynamodb"), table)
    sqs = boto3.client("sqs")
    queues = create_task_queues(sqs, secrets.token_hex(4), visibility_seconds=4)
    ddb_proxy, sqs_proxy = FaultProxy(dynamodb, seed=args.seed), FaultProxy(sqs_url, seed=args.seed + 1)
    stack.callback(ddb_proxy.stop)
    stack.callback(sqs_proxy.stop)
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"], os.environ["AWS_ENDPOINT_URL_SQS"] = ddb_proxy.url, sqs_proxy.url
    settings = Settings(
        table_name=table,
        task_queue_url=queues.url,
        task_dead_letter_arn=queues.dead_letter_arn,
        state_key=b"k" * 32,
        task_worker_timeout_seconds=3,
        task_sweep_seconds=1,
    )
    kit = build_kit(_app(), settings, streaming=False, local=True)
    runtime = kit.task_runtime
    assert runtime is not None
    runtime.requeue_after_seconds = 10  # a task whose message was never picked up: scaled like the rest

    def handler(event: dict[str, Any], context: Any) -> Any:
        return handle_event(runtime, event, context, queues.dead_letter_arn, kit.stores.changes)

    direct_sqs = boto3.client("sqs", endpoint_url=sqs_url)  # the event source itself is not under test
    source = Source(direct_sqs, queues.url, queues.dead_letter_url, handler, args.concurrency).start()
    stack.callback(source.stop)
    for service, operations in FAULTY.items():
        proxy = ddb_proxy if service == "dynamodb" else sqs_proxy
        for operation in operations:
            for kind in KINDS:
                proxy.arm(f"{service}.{operation}", kind, -1, chance=args.fault_rate)
    sweeping = threading.Event()

    def sweep() -> None:
        from lambda_mcp.runloop import run

        while not sweeping.wait(1.0):
            with contextlib.suppress(Exception):
                run(runtime.sweep(budget_seconds=5))

    sweeper = threading.Thread(target=sweep, daemon=True)
    sweeper.start()
    stack.callback(sweeping.set)

    started = time.monotonic()
    client = MCPTestClient(kit)
    tasks: dict[str, tuple[str, str, str]] = {}  # label -> (task id, tool, era)
    creates = Counter[str]()
    for index in range(args.tasks):
        label = f"t{index:05d}"
        tool = random.choices(["job", "chatty", "flaky", "asks"], weights=[60, 20, 10, 10])[0]
        era = "legacy" if tool == "chatty" or random.random() < 0.3 else "modern"
        task_id = await _create(client, tool, label, era, creates)
        tasks[label] = (task_id, tool, era)
        if random.random() < args.duplicates:
            with contextlib.suppress(Exception):
                direct_sqs.send_message(QueueUrl=queues.url, MessageBody=json.dumps({"taskId": task_id}))
    created_in = time.monotonic() - started

    final: dict[str, Any] = {}
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline and len(final) < len(tasks):
        for label, (task_id, _tool, era) in tasks.items():
            if label in final:
                continue
            record = await _read(runtime, task_id)
            if record is None:
                continue
            if record.terminal:
                final[label] = record
            elif record.status == "input_required":
                await _answer(client, record, era)
        await asyncio.sleep(0.5)
    ddb_proxy.clear()
    sqs_proxy.clear()
    unended = {label: await _read(runtime, tasks[label][0]) for label in tasks if label not in final}
    elapsed = time.monotonic() - started
    return _report(args, tasks, final, unended, creates, created_in, elapsed, ddb_proxy, sqs_proxy)


async def _create(client: Any, tool: str, label: str, era: str, creates: Counter[str]) -> str:
    """Create a task as a client would: retry on 503 (as told) until it is made."""
    for _ in range(50):
        creates[label] += 1
        arguments = {"label": label}
        if era == "modern":
            meta = {"io.modelcontextprotocol/clientCapabilities": TASKS_CAPS}
            made = await client.modern("tools/call", {"name": tool, "arguments": arguments}, meta=meta)
            if made.status == 200 and "result" in made.body:
                return str(made.result["taskId"])
        else:
            if client.session_id is None:
                opened = await client.initialize("2025-11-25", {"elicitation": {}})
                if opened.status != 200:
                    client.session_id = None
                    continue
            made = await client.legacy("tools/call", {"name": tool, "arguments": arguments, "task": {}})
            if made.status == 200 and "result" in made.body:
                return str(made.result["task"]["taskId"])
        await asyncio.sleep(0.05)
    raise RuntimeError(f"could not create {label}")


async def _read(runtime: Any, task_id: str) -> Any:
    from lambda_mcp.storage.errors import StorageError

    try:
        return await runtime.store.get(task_id, time.time())
    except StorageError:
        return None


async def _answer(client: Any, record: Any, era: str) -> None:
    from lambda_mcp.protocol.ids import TaskInputId

    answer = {"action": "accept", "content": {"ok": True}}
    if era == "modern":
        meta = {"io.modelcontextprotocol/clientCapabilities": TASKS_CAPS}
        params = {"taskId": record.task_id, "inputResponses": {"go": answer}}
        await client.modern("tasks/update", params, meta=meta, headers={"mcp-name": record.task_id})
    else:
        reply = {"jsonrpc": "2.0", "id": TaskInputId(record.task_id, "go").format(), "result": answer}
        await client.send("POST", json.dumps(reply), client.legacy_headers())


def _report(
    args: argparse.Namespace,
    tasks: dict[str, tuple[str, str, str]],
    final: dict[str, Any],
    unended: dict[str, Any],
    creates: Counter[str],
    created_in: float,
    elapsed: float,
    ddb: Any,
    sqs: Any,
) -> str:
    statuses = Counter(record.status for record in final.values())
    # a tool's error fails a 2025-11-25 task; a 2026 task completes with the error result
    expected_failed = {label for label, (_, tool, era) in tasks.items() if tool == "flaky" and era == "legacy"}
    gave_up = [label for label, record in final.items() if "stopped before finishing" in str(record.error)]
    dead = [label for label, record in final.items() if "dead-letter queue" in str(record.error)]
    wrong = [
        label
        for label, record in final.items()
        if (record.status == "failed") != (label in expected_failed) and label not in {*gave_up, *dead}
    ]
    extra: Counter[str] = Counter()
    odd: list[str] = []  # the labels worth a look: printed with what the harness saw of them
    for label in tasks:
        runs, ended, killed = LEDGER.runs[label], LEDGER.ended[label], LEDGER.killed[label]
        rounds = 2 if tasks[label][1] == "asks" else 1  # a task that asks runs once per round
        surplus = max(0, runs - rounds)
        by_kill = min(surplus, killed)
        extra["a run the harness killed"] += by_kill
        surplus -= by_kill
        by_outcome = min(surplus, max(0, ended - rounds))
        extra["the end of a run not recorded (storage fault past its retries)"] += by_outcome
        extra["unexplained"] += surplus - by_outcome
        if surplus > by_outcome:
            odd.append(label)
    lost = [label for label, record in unended.items() if record is None]
    stuck = [label for label, record in unended.items() if record is not None]
    lines = [
        f"tasks: {len(tasks)} (created in {created_in:.0f} s; {sum(creates.values()) - len(tasks)} create retries"
        f" after a 503), all ended or not after {elapsed:.0f} s",
        f"faults: each kind at {args.fault_rate:.0%} per call on DynamoDB {', '.join(FAULTY['dynamodb'])} and"
        f" SQS {', '.join(FAULTY['sqs'])}; runs killed at {args.kill_rate:.0%} per step; {args.duplicates:.0%}"
        " of tasks sent a duplicate message",
        "injected: "
        + ", ".join(f"{k} {v}" for k, v in sorted((ddb.injected + sqs.injected).items(), key=lambda kv: -kv[1])[:12]),
        f"ended: {dict(statuses)}; failed by design (flaky, 2025-11-25): {len(expected_failed)};"
        f" failed after 3 killed attempts: {len(gave_up)}; failed at the dead-letter queue (storage faults"
        f" past their retries on every delivery): {len(dead)}; ended otherwise than designed: {len(wrong)}",
        f"lost (no final state tasks/get returns): {len(lost)}; stuck (working or parked at the end): {len(stuck)}",
        f"runs: {sum(LEDGER.runs.values())} for {len(tasks)} tasks;"
        f" killed by the harness: {sum(LEDGER.killed.values())}",
        "extra runs by cause: " + ", ".join(f"{cause} {count}" for cause, count in extra.items()),
    ]
    for label in sorted({*wrong, *odd, *dead, *lost, *stuck}):
        record = final.get(label) or unended.get(label)
        lines.append(
            f"  {label} {tasks[label][1]}/{tasks[label][2]} {tasks[label][0]}: runs {LEDGER.runs[label]},"
            f" ended {LEDGER.ended[label]}, killed {LEDGER.killed[label]};"
            f" {getattr(record, 'status', 'no record')} {getattr(record, 'error', None) or ''}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
