"""The tasks scenario of `bench/faults.py`: clients create tasks over HTTP, workers run them from the
queue, the harness kills runs and answers questions; the report accounts for every run (see there)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from bench._local import start_dynamodb_local
from lambda_mcp import Context, MCPApp, ToolError

from .injection import arm, failed_unapplied, requests_of, summary

TASKS_CAPS: dict[str, Any] = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}
OUTCOMES = ("completed", "input_required")
"""Statuses only a run's end writes (a `failed` outcome is told by the flaky tool's text)."""


# -- what the tools record ---------------------------------------------------------------------------------
@dataclass
class Run:
    task_id: str
    label: str
    answered: bool = False
    """The run got the answer to its question (a task that asks: its second round)."""
    end: str = ""
    """`killed` (by the harness), `ended` (returned, or failed by design), `parked` (its question suspended it),
    or "" (cut short otherwise)."""


@dataclass
class Ledger:
    runs: list[Run] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    kill_rate: float = 0.05

    def start(self, ctx: Context, label: str) -> Run:
        run = Run(str(ctx.task_id), label)
        with self.lock:
            self.runs.append(run)
        return run


class WorkerKilled(BaseException):
    """The worker process dying mid-run (the harness's kill): nothing in the kit catches it."""


def _app(ledger: Ledger) -> Any:
    app = MCPApp("faults-bench")

    async def step(run: Run) -> None:
        await asyncio.sleep(random.uniform(0.0, 0.02))
        if random.random() < ledger.kill_rate:
            run.end = "killed"
            raise WorkerKilled(run.label)

    @app.tool(task_support="required")
    async def job(ctx: Context, label: str) -> str:
        run = ledger.start(ctx, label)
        await step(run)
        run.end = "ended"
        return f"{label} done"

    @app.tool(task_support="required")
    async def chatty(ctx: Context, label: str) -> str:
        run = ledger.start(ctx, label)
        for index in range(3):
            await ctx.info(f"{label} {index}")
            await step(run)
        run.end = "ended"
        return f"{label} told"

    @app.tool(task_support="required")
    async def flaky(ctx: Context, label: str) -> str:
        run = ledger.start(ctx, label)
        await step(run)
        run.end = "ended"
        raise ToolError(f"{label} failed by design")

    @app.tool(task_support="required")
    async def asks(ctx: Context, label: str) -> str:
        run = ledger.start(ctx, label)
        await step(run)
        try:
            answer = await ctx.elicit("Go on?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="go")
        except BaseException:  # the question suspends the run: it ends its round here (the kit parks it)
            run.end = "parked"
            raise
        run.answered = True
        await step(run)
        run.end = "ended"
        return f"{label} ok={(answer.get('content') or {}).get('ok')}"

    return app


# -- what the proxies record -------------------------------------------------------------------------------
@dataclass(frozen=True)
class TaskCall:
    """A request on a task's item (the DynamoDB journal's note)."""

    task_id: str
    operation: str
    status: str | None
    """The status it writes (None: a read, or a write that names none)."""
    create: bool
    outcome: bool
    """It writes what only a run's end writes."""


def task_call(operation: str, body: bytes) -> TaskCall | None:
    """What a request does to a task's item (the DynamoDB journal's note); None for anything else."""
    if b'"TASK#' not in body or operation not in ("dynamodb.PutItem", "dynamodb.UpdateItem", "dynamodb.GetItem"):
        return None
    request = json.loads(body)
    item = request.get("Item") or request.get("Key") or {}
    if item.get("sk", {}).get("S") != "TASK":
        return None
    status = (request.get("Item") or {}).get("status", {}).get("S")
    if status is None and operation == "dynamodb.UpdateItem":
        statuses = ("working", *OUTCOMES, "failed", "cancelled")
        status = next(
            (v["S"] for v in request.get("ExpressionAttributeValues", {}).values() if v.get("S") in statuses), None
        )
    text = (request.get("Item") or {}).get("body", {}).get("S", "")
    outcome = status in OUTCOMES or (status == "failed" and "failed by design" in text)
    create = operation == "dynamodb.PutItem" and item.get("version", {}).get("N") == "0"  # the first write
    return TaskCall(item["pk"]["S"].removeprefix("TASK#"), operation.split(".")[1], status, create, outcome)


def task_sends(operation: str, body: bytes) -> tuple[str, ...] | None:
    """The task ids an SQS send names (the SQS journal's note)."""
    if operation not in ("sqs.SendMessage", "sqs.SendMessageBatch"):
        return None
    request = json.loads(body)
    bodies = [request.get("MessageBody")] + [entry.get("MessageBody") for entry in request.get("Entries", [])]
    return tuple(json.loads(text)["taskId"] for text in bodies if text)


# -- the event source --------------------------------------------------------------------------------------
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


# -- the run -----------------------------------------------------------------------------------------------
@dataclass
class Calls:
    """What the client got: per call (label), its tool, era and the task id `tools/call` answered."""

    tasks: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    retries: Counter[str] = field(default_factory=Counter)
    clients: dict[str, Any] = field(default_factory=dict)
    """The client (its legacy session) that made each call: a 2025-11-25 task is answered in its session."""


async def run_tasks(args: argparse.Namespace, stack: contextlib.ExitStack) -> str:
    """The tasks scenario, set up on `stack`; its report."""
    import boto3
    from moto.server import ThreadedMotoServer

    from lambda_mcp.config import Settings
    from lambda_mcp.kit import build_kit
    from lambda_mcp.storage.dynamodb import create_table
    from lambda_mcp.worker import handle_event
    from tests.support.client import MCPTestClient
    from tests.support.fault_proxy import FaultProxy
    from tests.support.processes import free_port
    from tests.support.queues import create_task_queues

    dynamodb = start_dynamodb_local(stack)
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    moto.start()
    stack.callback(moto.stop)
    sqs_url = "http://{}:{}".format(*moto.get_host_and_port())
    table = f"faults-{secrets.token_hex(4)}"
    direct_ddb = boto3.client("dynamodb", endpoint_url=dynamodb)  # the harness's own view: no faults
    create_table(direct_ddb, table)
    direct_sqs = boto3.client("sqs", endpoint_url=sqs_url)  # the event source itself is not under test
    queues = create_task_queues(direct_sqs, secrets.token_hex(4), visibility_seconds=4)
    ddb_proxy = FaultProxy(dynamodb, seed=args.seed, note=task_call)
    sqs_proxy = FaultProxy(sqs_url, seed=args.seed + 1, note=task_sends)
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
    ledger = Ledger(kill_rate=args.kill_rate)
    kit = build_kit(_app(ledger), settings, streaming=False, local=True)
    runtime = kit.task_runtime
    assert runtime is not None
    runtime.requeue_after_seconds = 10  # a task whose message was never picked up: scaled like the rest

    def handler(event: dict[str, Any], context: Any) -> Any:
        return handle_event(runtime, event, context, queues.dead_letter_arn, kit.stores.changes)

    source = Source(direct_sqs, queues.url, queues.dead_letter_url, handler, args.concurrency).start()
    stack.callback(source.stop)
    arm(ddb_proxy, "dynamodb", args.fault_rate, args.past_retries, past_rate=args.past_rate)
    sends = ("SendMessage", "SendMessageBatch")
    arm(sqs_proxy, "sqs", args.fault_rate, args.past_retries, sends, past_rate=args.past_rate)
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
    calls = Calls()
    plan = []
    for index in range(args.tasks):
        tool = random.choices(["job", "chatty", "flaky", "asks"], weights=[60, 20, 10, 10])[0]
        era = "legacy" if tool == "chatty" or random.random() < 0.3 else "modern"
        plan.append((f"t{index:05d}", tool, era, random.random() < args.duplicates))
    queue: asyncio.Queue[tuple[str, str, str, bool]] = asyncio.Queue()
    for planned in plan:
        queue.put_nowait(planned)

    async def creator() -> None:
        client = MCPTestClient(kit)
        while not queue.empty():
            label, tool, era, duplicate = queue.get_nowait()
            task_id = await _create(client, tool, label, era, calls)
            calls.tasks[label], calls.clients[label] = (task_id, tool, era), client
            if duplicate:
                with contextlib.suppress(Exception):
                    direct_sqs.send_message(QueueUrl=queues.url, MessageBody=json.dumps({"taskId": task_id}))

    await asyncio.gather(*(creator() for _ in range(max(1, args.clients))))
    created_in = time.monotonic() - started

    answered: dict[str, float] = {}
    visible = {task_id: label for label, (task_id, _, _) in calls.tasks.items()}
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        table_now = await asyncio.to_thread(_statuses, direct_ddb, table)
        pending = [t for t in visible if table_now.get(t) not in ("completed", "failed", "cancelled")]
        working = [t for t, status in table_now.items() if status == "working"]
        if not pending and not working:
            break
        for task_id in pending:
            if table_now.get(task_id) == "input_required" and time.monotonic() - answered.get(task_id, 0) > 2:
                answered[task_id] = time.monotonic()
                label = visible[task_id]
                await _answer(calls.clients[label], task_id, calls.tasks[label][2])
        await asyncio.sleep(1.0)
    elapsed = time.monotonic() - started
    sweeping.set()
    source.stop()
    ddb_proxy.clear()
    sqs_proxy.clear()
    dump = await asyncio.to_thread(_dump, direct_ddb, table)
    return _report(args, calls, ledger, dump, ddb_proxy, sqs_proxy, created_in, elapsed)


async def _create(client: Any, tool: str, label: str, era: str, calls: Calls) -> str:
    """Create a task as a client would: on a 503, send the same request again (same JSON-RPC id)."""
    arguments = {"label": label}
    for attempt in range(50):
        if attempt:
            calls.retries[label] += 1
            await asyncio.sleep(0.05)
        params: dict[str, Any]
        if era == "modern":
            meta = {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": TASKS_CAPS,
            }
            params = {"name": tool, "arguments": arguments, "_meta": meta}
            headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": tool}
        else:
            if client.session_id is None:
                with contextlib.suppress(AssertionError):  # a 503: no session yet
                    await client.initialize("2025-11-25", {"elicitation": {}})
                if client.session_id is None:
                    continue
            params = {"name": tool, "arguments": arguments, "task": {}}
            headers = client.legacy_headers()
        message = {"jsonrpc": "2.0", "id": label, "method": "tools/call", "params": params}
        made = await client.send("POST", json.dumps(message), headers)
        if made.status == 200 and "result" in made.body:
            task = made.body["result"] if era == "modern" else made.body["result"]["task"]
            return str(task["taskId"])
    raise RuntimeError(f"could not create {label}")


async def _answer(client: Any, task_id: str, era: str) -> None:
    from lambda_mcp.protocol.ids import TaskInputId

    answer = {"action": "accept", "content": {"ok": True}}
    with contextlib.suppress(Exception):  # a 503: answered again at the next poll
        if era == "modern":
            meta = {"io.modelcontextprotocol/clientCapabilities": TASKS_CAPS}
            params = {"taskId": task_id, "inputResponses": {"go": answer}}
            await client.modern("tasks/update", params, meta=meta, headers={"mcp-name": task_id})
        else:
            reply = {"jsonrpc": "2.0", "id": TaskInputId(task_id, "go").format(), "result": answer}
            await client.send("POST", json.dumps(reply), client.legacy_headers())


def _scan(ddb: Any, table: str, **extra: Any) -> list[dict[str, Any]]:
    """Every task item of the table, read directly from DynamoDB Local (not through the proxy)."""
    items: list[dict[str, Any]] = []
    query: dict[str, Any] = {
        "TableName": table,
        "FilterExpression": "sk = :task",
        "ExpressionAttributeValues": {":task": {"S": "TASK"}},
        **extra,
    }
    while True:
        page = ddb.scan(**query)
        items += page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return items
        query["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _statuses(ddb: Any, table: str) -> dict[str, str]:
    names = {"#status": "status"}
    items = _scan(ddb, table, ProjectionExpression="pk, #status", ExpressionAttributeNames=names)
    return {item["pk"]["S"].removeprefix("TASK#"): item["status"]["S"] for item in items}


def _dump(ddb: Any, table: str) -> dict[str, dict[str, Any]]:
    """The table at the end: every task's record (as stored), by id."""
    return {item["pk"]["S"].removeprefix("TASK#"): json.loads(item["body"]["S"]) for item in _scan(ddb, table)}


# -- the report --------------------------------------------------------------------------------------------
def _report(
    args: argparse.Namespace,
    calls: Calls,
    ledger: Ledger,
    dump: dict[str, dict[str, Any]],
    ddb: Any,
    sqs: Any,
    created_in: float,
    elapsed: float,
) -> str:
    runs: dict[str, list[Run]] = defaultdict(list)
    for run in ledger.runs:
        runs[run.task_id].append(run)
    visible = {task_id: label for label, (task_id, _, _) in calls.tasks.items()}
    writes: dict[str, list[list[Any]]] = defaultdict(list)  # task id -> its requests (attempts each)
    for attempts in requests_of(ddb.journal).values():
        writes[attempts[0].note.task_id].append(attempts)
    sends: dict[str, list[list[Any]]] = defaultdict(list)
    for attempts in requests_of(sqs.journal).values():
        for task_id in set(attempts[0].note):
            sends[task_id].append(attempts)

    # extra runs of the client's tasks, explained only by what the records show
    causes: Counter[str] = Counter()
    odd: dict[str, str] = {}
    for task_id in visible:
        mine = runs.get(task_id, [])
        rounds = 2 if any(run.answered for run in mine) else 1
        surplus = max(0, len(mine) - rounds)
        by_kill = min(surplus, sum(run.end == "killed" for run in mine))
        unrecorded = sum(1 for a in writes[task_id] if a[0].note.outcome and failed_unapplied(a))
        by_outcome = min(surplus - by_kill, unrecorded)
        causes["a kill of an earlier run"] += by_kill
        causes["an outcome write failed past its retries (in the journal)"] += by_outcome
        unexplained = surplus - by_kill - by_outcome
        causes["unexplained"] += unexplained
        if unexplained:
            odd[task_id] = f"{unexplained} unexplained extra run(s)"

    orphans = {task_id for task_id in runs if task_id not in visible}
    orphan_runs = sum(len(runs[t]) for t in orphans)
    orphan_ends = Counter(dump.get(t, {}).get("status", "no item") for t in orphans)
    unqueued = [t for t in orphans if "could not be queued" in str(dump.get(t, {}).get("error"))]
    unqueued_ran = [t for t in unqueued if any(run.end == "ended" for run in runs[t])]
    never_ran = Counter(
        f"{record['status']} {(record.get('error') or {}).get('message', '')}".strip()
        for t, record in dump.items()
        if t not in visible and t not in orphans
    )
    twice = {
        label
        for label, (task_id, _, _) in calls.tasks.items()
        if runs.get(task_id) and any(r.label == label for t in orphans for r in runs[t])
    }
    for task_id in sorted(orphans)[:40]:
        odd[task_id] = "orphan"

    final = {t: dump[t] for t in visible if t in dump and dump[t]["status"] in ("completed", "failed", "cancelled")}
    lost = [t for t in visible if t not in dump]
    stuck = [t for t in visible if t in dump and t not in final]
    stuck_orphans = [t for t in orphans if dump.get(t, {}).get("status") == "working"]
    parked_orphans = [t for t in orphans if dump.get(t, {}).get("status") == "input_required"]
    for task_id in [*lost, *stuck, *stuck_orphans]:
        odd[task_id] = "lost" if task_id in lost else "stuck"
    statuses = Counter(record["status"] for record in final.values())
    expected_failed = {t for t, label in visible.items() if calls.tasks[label][1:] == ("flaky", "legacy")}
    gave_up = [t for t, r in final.items() if "stopped before finishing" in str(r.get("error"))]
    dead = [t for t, r in final.items() if "dead-letter queue" in str(r.get("error"))]
    wrong = [
        t
        for t, r in final.items()
        if (r["status"] == "failed") != (t in expected_failed) and t not in {*gave_up, *dead}
    ]
    all_runs = sum(len(v) for v in runs.values())
    kills = sum(run.end == "killed" for run in ledger.runs)
    injected = sorted((ddb.injected + sqs.injected).items(), key=lambda kv: -kv[1])
    mode = "per call" + (f" and, past the retries, at {args.past_rate:.0%} per request" if args.past_retries else "")
    lines = [
        f"tasks: {len(calls.tasks)} created by {args.clients} clients in {created_in:.0f} s"
        f" ({sum(calls.retries.values())} retries of a create answered 503, same JSON-RPC id);"
        f" all ended or not after {elapsed:.0f} s",
        f"faults: each kind at {args.fault_rate:.0%} {mode}; runs killed at {args.kill_rate:.0%} per step;"
        f" {args.duplicates:.0%} of tasks sent a duplicate message",
        "injected (attempts): " + ", ".join(f"{k} {v}" for k, v in injected[:14]),
        f"runs: {all_runs} ({kills} killed by the harness); {all_runs - orphan_runs} of the client's"
        f" {len(visible)} tasks",
        f"ORPHANS RUN: {orphan_runs} runs of {len(orphans)} tasks the client never got (calls whose tool ran"
        f" under two tasks: {len(twice)}); those tasks ended {dict(orphan_ends)}; failed 'could not be queued'"
        f" though their tool ran to its end: {len(unqueued_ran)}",
        f"tasks the client never got that never ran: {dict(never_ran)}",
        "extra runs of the client's tasks: " + ", ".join(f"{cause} {n}" for cause, n in causes.items()),
        f"RUN MORE THAN ONCE WITH NOTHING TO EXPLAIN IT: {causes['unexplained'] + orphan_runs}"
        f" ({causes['unexplained']} unexplained extra runs + {orphan_runs} orphan runs)",
        f"LOST (no final state in the table's dump): {len(lost)}; STUCK (working or parked at the end):"
        f" {len(stuck) + len(stuck_orphans)} ({len(stuck_orphans)} of them orphans); orphans parked on a"
        f" question nobody will answer: {len(parked_orphans)}",
        f"ended: {dict(statuses)}; failed by design (flaky, 2025-11-25): {len(expected_failed)};"
        f" failed after 3 killed attempts: {len(gave_up)}; failed at the dead-letter queue: {len(dead)};"
        f" ended otherwise than designed: {len(wrong)}",
    ]
    for task_id in wrong:
        odd.setdefault(task_id, "ended otherwise than designed")
    for task_id, why in list(odd.items())[:60]:
        mine = runs.get(task_id, [])
        record = dump.get(task_id, {})
        label = visible.get(task_id) or (mine[0].label if mine else "?")
        ends = Counter(run.end or "cut short" for run in mine)
        lines.append(
            f"  {task_id} ({label}) {why}: runs {dict(ends)}; {record.get('status', 'no item')}"
            f" {(record.get('error') or {}).get('message', '')}"
        )
        failing = [a for a in writes[task_id] + sends[task_id] if any(s.status >= 300 for s in a)]
        for attempts in failing[:4]:
            lines.append(f"      {summary(attempts)}")
    return "\n".join(lines)
