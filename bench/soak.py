"""Soak benchmark: thousands of mixed MCP calls through two Lambda instances sharing one table and one task queue.

Prints figures; it is not a test (the test suite never runs it). Two `lambda-mcp dev --lambda`
processes serve `bench/apps/soak_app.py` through the real buffered HTTP handler (one request at a
time, like a Lambda execution environment) and run tasks on the real worker handler. They share a
table on Amazon DynamoDB Local and a task queue on moto server's SQS, behind the alternating front
door of `tests/support/front_door.py` (`LambdaPair`), so every follow-up request (an answer POST, a
resuming GET, a poll) lands on the other instance. Everything listens on 127.0.0.1 only, and
everything started here is stopped at the end, also on failure.

The load (default 5,000 calls, 8 at a time) mixes:

* 10% task-augmented `tools/call`s (2025-11-25 `params.task`), half polled with `tasks/get`, half
  waited with `tasks/result`;
* 4% elicitations: the buffered suspend / answer POST / resuming GET flow;
* 2% cancel races: `tasks/cancel` aimed at the moment its task completes;
* the rest plain `tools/call`s, alternating 2026-07-28 stateless requests and 2025-11-25 session requests.

Afterwards every task created is listed and polled until final (or a timeout), and the table is
scanned for items without `expires_at`. Exit status 1 when a call failed (HTTP 5xx, an unexpected
JSON-RPC error or response, a transport exception), a task was left non-final or an item has no TTL.

    .venv/bin/python bench/soak.py [--calls 5000] [--concurrency 8] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import logging
import math
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from _local import start_dynamodb_local  # bench/, the script's own directory

ROOT = Path(__file__).resolve().parent.parent
APP = "bench/apps/soak_app.py"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
FINAL = {"completed", "failed", "cancelled"}
SHARES = {"task": 0.10, "elicit": 0.04, "cancel": 0.02}
"""Shares of `--calls` for each special kind; the rest are plain calls."""
REQUEST_TIMEOUT = 130.0
"""Seconds for one HTTP request; above the front door's own 120 s upstream timeout."""
CALL_DEADLINE = 90.0
"""Seconds one logical call (with its resumptions and polls) may take before it counts as failed."""
SESSION_CALLS = 100
"""Calls a client makes on one 2025-11-25 session before it opens a new one."""
FAKE_AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}
LABELS = {
    "modern": "plain, 2026-07-28",
    "legacy": "plain, 2025-11-25",
    "task_get": "task, tasks/get polls",
    "task_result": "task, tasks/result",
    "elicit": "elicitation",
    "cancel": "cancel race",
}


# --- wire --------------------------------------------------------------------------------------


class CallFailed(Exception):
    """Something the soak did not expect; `evidence` shows the request and the response."""

    def __init__(self, what: str, evidence: str) -> None:
        super().__init__(what)
        self.what = what
        self.evidence = evidence


@dataclass
class Reply:
    """One HTTP exchange, with the JSON-RPC messages, SSE event ids and `retry:` of its body."""

    sent: str
    status: int
    headers: httpx.Headers
    text: str
    messages: list[dict[str, Any]]
    event_ids: list[str]
    retry_ms: int | None

    def evidence(self) -> str:
        body = self.text if len(self.text) <= 700 else self.text[:700] + "..."
        return f"{self.sent} -> HTTP {self.status} {self.headers.get('content-type', '')} {body!r}"

    def response_to(self, request_id: int) -> dict[str, Any] | None:
        return next((m for m in self.messages if m.get("id") == request_id and "method" not in m), None)

    def server_requests(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if "method" in m and "id" in m]


def parse_body(content_type: str, text: str) -> tuple[list[dict[str, Any]], list[str], int | None]:
    """The messages, event ids and retry of a JSON or SSE body."""
    if not text.strip():
        return [], [], None
    if content_type.startswith("application/json"):
        parsed = json.loads(text)
        return (parsed if isinstance(parsed, list) else [parsed]), [], None
    messages: list[dict[str, Any]] = []
    ids: list[str] = []
    retry: int | None = None
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            messages.append(json.loads(line[5:]))
        elif line.startswith("id:"):
            ids.append(line[3:].strip())
        elif line.startswith("retry:"):
            retry = int(line[6:])
    return messages, ids, retry


class Wire:
    """HTTP through the front door: counts requests and 5xx; transport problems become `CallFailed`."""

    def __init__(self, url: str, concurrency: int) -> None:
        self.url = url
        limits = httpx.Limits(max_connections=concurrency * 2, max_keepalive_connections=concurrency * 2)
        self.http = httpx.AsyncClient(timeout=REQUEST_TIMEOUT, limits=limits)
        self.requests = 0
        self.server_errors = 0

    async def send(self, method: str, headers: dict[str, str], body: dict[str, Any] | None = None) -> Reply:
        content = json.dumps(body).encode() if body is not None else b""
        resumed = f"last-event-id={headers.get('last-event-id')}"
        sent = f"{method} {content.decode()[:300] if body else resumed}"
        self.requests += 1
        try:
            response = await self.http.request(
                method, self.url, content=content, headers={"content-type": "application/json", **headers}
            )
        except httpx.HTTPError as exc:
            raise CallFailed(f"transport: {type(exc).__name__}", f"{sent} -> {exc!r}") from exc
        content_type = response.headers.get("content-type", "")
        try:
            messages, ids, retry = parse_body(content_type, response.text)
        except ValueError as exc:
            evidence = f"{sent} -> HTTP {response.status_code} {response.text[:500]!r}"
            raise CallFailed("undecodable body", evidence) from exc
        reply = Reply(sent, response.status_code, response.headers, response.text, messages, ids, retry)
        if response.status_code >= 500:
            self.server_errors += 1
            raise CallFailed(f"HTTP {response.status_code}", reply.evidence())
        return reply

    async def close(self) -> None:
        await self.http.aclose()


def result_of(message: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """The `result` of a JSON-RPC response; an error response is a failure."""
    if "error" in message or not isinstance(message.get("result"), dict):
        code = (message.get("error") or {}).get("code")
        raise CallFailed(f"JSON-RPC error {code}", reply.evidence())
    result: dict[str, Any] = message["result"]
    return result


def expect_text(result: dict[str, Any], expected: str, reply: Reply) -> None:
    content = result.get("content") or [{}]
    if result.get("isError") or content[0].get("text") != expected:
        raise CallFailed(f"unexpected tool result (wanted {expected!r})", reply.evidence())


# --- a 2025-11-25 session ---------------------------------------------------------------------


class Session:
    """A 2025-11-25 session declaring elicitation, over the front door."""

    def __init__(self, wire: Wire, session_id: str) -> None:
        self.wire = wire
        self.session_id = session_id
        self.ids = itertools.count(1)
        self.last: Reply | None = None
        """The latest reply, for evidence."""

    @classmethod
    async def open(cls, wire: Wire) -> Session:
        info = {"name": "lambda-mcp-soak", "version": "1"}
        params = {"protocolVersion": LEGACY, "capabilities": {"elicitation": {}}, "clientInfo": info}
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        reply = await wire.send("POST", {"accept": ACCEPT}, body)
        session_id = reply.headers.get("mcp-session-id")
        response = reply.response_to(0)
        if reply.status != 200 or not session_id or response is None:
            raise CallFailed("initialize failed", reply.evidence())
        result_of(response, reply)
        session = cls(wire, session_id)
        await session.notify("notifications/initialized")
        return session

    def headers(self, **extra: str) -> dict[str, str]:
        return {"accept": ACCEPT, "mcp-session-id": self.session_id, "mcp-protocol-version": LEGACY, **extra}

    async def notify(self, method: str) -> None:
        reply = await self.wire.send("POST", self.headers(), {"jsonrpc": "2.0", "method": method})
        if reply.status != 202:
            raise CallFailed(f"{method} not accepted", reply.evidence())

    async def post(self, method: str, params: dict[str, Any]) -> tuple[int, Reply]:
        request_id = next(self.ids)
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        reply = self.last = await self.wire.send("POST", self.headers(), body)
        if reply.status != 200:
            raise CallFailed(f"{method}: HTTP {reply.status}", reply.evidence())
        return request_id, reply

    async def respond(self, request_id: str, result: dict[str, Any]) -> None:
        """POST our response to a server-to-client request; the server must accept it with 202."""
        reply = await self.wire.send("POST", self.headers(), {"jsonrpc": "2.0", "id": request_id, "result": result})
        if reply.status != 202:
            raise CallFailed("answer POST not accepted", reply.evidence())

    async def follow(self, request_id: int, reply: Reply, *, resume_at_once: bool = False) -> dict[str, Any]:
        """The response to `request_id`, resuming with GET + Last-Event-ID (after `retry:`) as often as the
        server ends a response early; a server-to-client request on the way is unexpected."""
        deadline = time.monotonic() + CALL_DEADLINE
        last_id = reply.event_ids[-1] if reply.event_ids else None
        while (found := reply.response_to(request_id)) is None:
            if reply.server_requests() and not resume_at_once:
                raise CallFailed("unexpected server-to-client request", reply.evidence())
            if last_id is None or reply.retry_ms is None:
                raise CallFailed("no response and no resumption point", reply.evidence())
            if time.monotonic() > deadline:
                raise CallFailed(f"no response within {CALL_DEADLINE:.0f} s", reply.evidence())
            if not resume_at_once:
                await asyncio.sleep(reply.retry_ms / 1000)
            resume_at_once = False
            reply = self.last = await self.wire.send("GET", self.headers(**{"last-event-id": last_id}))
            if reply.status != 200:
                raise CallFailed(f"resumption: HTTP {reply.status}", reply.evidence())
            last_id = reply.event_ids[-1] if reply.event_ids else last_id
        return found

    async def request(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Reply]:
        """The JSON-RPC response message (result or error) of a request, and the reply that carried it."""
        request_id, reply = await self.post(method, params)
        message = await self.follow(request_id, reply)
        assert self.last is not None
        return message, self.last

    async def result(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], Reply]:
        message, reply = await self.request(method, params)
        return result_of(message, reply), reply


# --- the load ------------------------------------------------------------------------------------


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    failures: list[tuple[str, CallFailed]] = field(default_factory=list)
    races: Counter[str] = field(default_factory=Counter)
    done: int = 0

    def fail(self, kind: str, failure: CallFailed) -> None:
        self.failures.append((kind, failure))


@dataclass
class TaskRef:
    session: Session
    expected: str | None = None
    """The final status a cancel race decided (`cancelled` or `completed`), checked again at the end."""


def iso_epoch(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


class Load:
    """Runs the calls: each kind is one method; `run` keeps `concurrency` clients busy."""

    def __init__(self, wire: Wire, rng: random.Random) -> None:
        self.wire = wire
        self.rng = rng
        self.stats = Stats()
        self.sessions: list[Session] = []
        self.tasks: dict[str, TaskRef] = {}
        self.overheads: list[float] = [0.1]
        """Seconds a task takes beyond its tool's run (queue, claim, store), from completed tasks."""
        self.bias = 0.0
        """Nudges cancel timing toward the moment of completion: later after a win, earlier after a loss."""
        self.kinds: dict[str, Callable[[Session], Awaitable[None]]] = {
            "modern": self.modern_call,
            "legacy": self.legacy_call,
            "task_get": self.task_polled,
            "task_result": self.task_waited,
            "elicit": self.elicitation,
            "cancel": self.cancel_race,
        }

    async def new_session(self) -> Session:
        session = await Session.open(self.wire)
        self.sessions.append(session)
        return session

    # -- kinds ---------------------------------------------------------------------------
    async def modern_call(self, session: Session) -> None:
        text = f"modern-{self.rng.randrange(10**9)}"
        meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
        params = {"name": "echo", "arguments": {"text": text}, "_meta": meta}
        headers = {"accept": ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "echo"}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        reply = await self.wire.send("POST", headers, body)
        response = reply.response_to(1)
        if reply.status != 200 or response is None:
            raise CallFailed("no response", reply.evidence())
        expect_text(result_of(response, reply), text, reply)

    async def legacy_call(self, session: Session) -> None:
        text = f"legacy-{self.rng.randrange(10**9)}"
        result, reply = await session.result("tools/call", {"name": "echo", "arguments": {"text": text}})
        expect_text(result, text, reply)

    async def create_task(self, session: Session, seconds: float, label: str) -> dict[str, Any]:
        params = {"name": "work", "arguments": {"seconds": seconds, "label": label}, "task": {}}
        result, reply = await session.result("tools/call", params)
        task = result.get("task")
        if not isinstance(task, dict) or task.get("status") != "working":
            raise CallFailed("not a working task", reply.evidence())
        self.tasks[task["taskId"]] = TaskRef(session)
        return task

    async def task_polled(self, session: Session) -> None:
        seconds, label = self.rng.uniform(0.2, 1.0), f"polled-{self.rng.randrange(10**9)}"
        task = await self.create_task(session, seconds, label)
        deadline = time.monotonic() + CALL_DEADLINE
        while task["status"] not in FINAL:
            if time.monotonic() > deadline:
                raise CallFailed("task not final in time", json.dumps(task))
            await asyncio.sleep(task["pollInterval"] / 1000)
            task, reply = await session.result("tasks/get", {"taskId": task["taskId"]})
        if task["status"] != "completed":
            raise CallFailed(f"task {task['status']}", reply.evidence())
        self.overheads.append(iso_epoch(task["lastUpdatedAt"]) - iso_epoch(task["createdAt"]) - seconds)
        result, reply = await session.result("tasks/result", {"taskId": task["taskId"]})
        expect_text(result, f"worked {label}", reply)

    async def task_waited(self, session: Session) -> None:
        seconds, label = self.rng.uniform(0.2, 1.0), f"waited-{self.rng.randrange(10**9)}"
        task = await self.create_task(session, seconds, label)
        result, reply = await session.result("tasks/result", {"taskId": task["taskId"]})
        expect_text(result, f"worked {label}", reply)
        related = (result.get("_meta") or {}).get("io.modelcontextprotocol/related-task")
        if related != {"taskId": task["taskId"]}:
            raise CallFailed("tasks/result without its related-task _meta", reply.evidence())

    async def elicitation(self, session: Session) -> None:
        name = f"user-{self.rng.randrange(10**9)}"
        request_id, reply = await session.post("tools/call", {"name": "ask_name", "arguments": {}})
        asks = [m for m in reply.server_requests() if m["method"] == "elicitation/create"]
        if len(asks) != 1 or reply.response_to(request_id) is not None or reply.retry_ms is None:
            raise CallFailed("expected one elicitation/create and a resumption point", reply.evidence())
        await session.respond(asks[0]["id"], {"action": "accept", "content": {"name": name}})
        message = await session.follow(request_id, reply, resume_at_once=True)
        assert session.last is not None
        expect_text(result_of(message, session.last), f"accept:{name}", session.last)

    async def cancel_race(self, session: Session) -> None:
        seconds = self.rng.uniform(0.2, 0.6)
        task = await self.create_task(session, seconds, "raced")
        overhead = statistics.median(self.overheads[-50:])
        target = iso_epoch(task["createdAt"]) + seconds + overhead + self.bias + self.rng.uniform(-0.1, 0.1)
        await asyncio.sleep(max(0.0, target - time.time()))
        message, reply = await session.request("tasks/cancel", {"taskId": task["taskId"]})
        outcome = self.race_outcome(message, reply)
        self.bias += 0.03 if outcome == "cancelled" else -0.03
        self.stats.races[outcome] += 1
        self.tasks[task["taskId"]].expected = outcome
        got, reply = await session.result("tasks/get", {"taskId": task["taskId"]})
        if got["status"] != outcome:
            raise CallFailed(f"tasks/cancel said {outcome}, tasks/get says {got['status']}", reply.evidence())

    @staticmethod
    def race_outcome(message: dict[str, Any], reply: Reply) -> str:
        """`cancelled` (the cancel won) or `completed` (the task finished first); anything else fails."""
        result, error = message.get("result") or {}, message.get("error") or {}
        if result.get("status") == "cancelled":
            return "cancelled"
        if error.get("code") == -32602 and "is already completed" in str(error.get("message")):
            return "completed"
        raise CallFailed("unexpected tasks/cancel answer", reply.evidence())

    # -- driving -------------------------------------------------------------------------
    async def one(self, kind: str, session: Session) -> None:
        started = time.perf_counter()
        try:
            await self.kinds[kind](session)
        except CallFailed as failure:
            self.stats.fail(kind, failure)
        except Exception as exc:  # a response of an unexpected shape: still a failure, with what we know
            last = session.last.evidence() if session.last else ""
            self.stats.fail(kind, CallFailed(f"{type(exc).__name__}: {exc}", last))
        else:
            self.stats.latencies[kind].append(time.perf_counter() - started)
        self.stats.done += 1

    async def client(self, jobs: Iterator[str], progress: Callable[[], None]) -> None:
        session: Session | None = None
        for count, kind in enumerate(jobs):
            if session is None or count % SESSION_CALLS == 0:
                try:
                    session = await self.new_session()
                except CallFailed as failure:
                    self.stats.fail("initialize", failure)
                    continue
            await self.one(kind, session)
            progress()

    async def run(self, jobs: list[str], concurrency: int) -> float:
        shared = iter(jobs)
        started = time.perf_counter()
        step = max(1, len(jobs) // 10)

        def progress() -> None:
            if self.stats.done % step == 0:
                elapsed = time.perf_counter() - started
                print(f"  {self.stats.done:6d}/{len(jobs)} calls, {elapsed:6.1f} s, {len(self.stats.failures)} errors")

        await asyncio.gather(*(self.client(shared, progress) for _ in range(concurrency)))
        return time.perf_counter() - started


def make_jobs(calls: int, rng: random.Random) -> list[str]:
    counts = {kind: round(calls * share) for kind, share in SHARES.items()}
    plain = calls - sum(counts.values())
    jobs = ["task_get", "task_result"] * (counts["task"] // 2) + ["task_get"] * (counts["task"] % 2)
    jobs += ["elicit"] * counts["elicit"] + ["cancel"] * counts["cancel"]
    jobs += ["modern", "legacy"] * (plain // 2) + ["modern"] * (plain % 2)
    rng.shuffle(jobs)
    return jobs


# --- after the load --------------------------------------------------------------------------


async def list_tasks(session: Session) -> dict[str, dict[str, Any]]:
    tasks: dict[str, dict[str, Any]] = {}
    cursor: str | None = None
    for _ in range(1000):
        page, _ = await session.result("tasks/list", {"cursor": cursor} if cursor else {})
        tasks.update({t["taskId"]: t for t in page["tasks"]})
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    return tasks


async def settle_tasks(load: Load, timeout: float) -> dict[str, str]:
    """The statuses of all tasks created: listed per session, then those not final polled until they are
    or `timeout` passes. A task missing from its session's list is a failure; `unknown`: tasks/get failed."""
    statuses: dict[str, str] = {}
    for session in {id(ref.session): ref.session for ref in load.tasks.values()}.values():
        try:
            statuses.update({task_id: task["status"] for task_id, task in (await list_tasks(session)).items()})
        except CallFailed as failure:
            load.stats.fail("final check", failure)
    for task_id in sorted(load.tasks.keys() - statuses.keys()):
        statuses[task_id] = await poll_status(load, task_id)
        found = f"{task_id}: tasks/get says {statuses[task_id]}"
        load.stats.fail("final check", CallFailed("task missing from tasks/list", found))
    deadline = time.monotonic() + timeout
    while (pending := [t for t, s in statuses.items() if s not in FINAL | {"unknown"}]) and (
        time.monotonic() < deadline
    ):
        await asyncio.sleep(0.5)
        for task_id in pending:
            statuses[task_id] = await poll_status(load, task_id)
    return statuses


async def poll_status(load: Load, task_id: str) -> str:
    """A task's status from `tasks/get`; `unknown` (and a failure) when that fails."""
    try:
        task, _ = await load.tasks[task_id].session.result("tasks/get", {"taskId": task_id})
    except CallFailed as failure:
        load.stats.fail("final check", failure)
        return "unknown"
    return str(task["status"])


def check_races(load: Load, statuses: dict[str, str]) -> None:
    """A cancel race's winner must still be the task's status once everything settled."""
    for task_id, ref in load.tasks.items():
        if ref.expected is not None and statuses.get(task_id, ref.expected) != ref.expected:
            found = f"task {task_id}: tasks/cancel decided {ref.expected}, final status {statuses[task_id]}"
            load.stats.fail("final check", CallFailed("cancel race changed its outcome", found))


def scan_ttl(endpoint: str, table: str) -> tuple[Counter[str], Counter[str], list[dict[str, Any]]]:
    """Items per type, items without `expires_at` per type, and a few of those (a full scan: fine here)."""
    import boto3

    client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    items: Counter[str] = Counter()
    missing: Counter[str] = Counter()
    examples: list[dict[str, Any]] = []
    for page in client.get_paginator("scan").paginate(TableName=table):
        for item in page.get("Items", []):
            kind = item_type(item)
            items[kind] += 1
            if "expires_at" not in item:
                missing[kind] += 1
                if len(examples) < 3:
                    examples.append(item)
    return items, missing, examples


def item_type(item: dict[str, Any]) -> str:
    """`SESSION/STREAM`, `TASK/TASK`, `CHANGES/<cursor>` ... from the key prefixes."""
    pk = item["pk"]["S"].split("#", 1)[0]
    sk = item["sk"]["S"].split("#", 1)[0]
    return f"{pk}/{sk}" if pk != "CHANGES" else "CHANGES"


def log_problems(work: Path) -> list[str]:
    """The servers' log lines beyond their start-up banner (`lambda-mcp...`) and the handlers' JSON lines
    at INFO or DEBUG (one per request and task run): warnings, errors, tracebacks."""
    lines: list[str] = []
    for log in sorted(work.glob("server-*.log")):
        for line in log.read_text(errors="replace").splitlines():
            if line.strip() and not line.startswith("lambda-mcp") and not _routine(line):
                lines.append(f"{log.name}: {line[:300]}")
    return lines


def _routine(line: str) -> bool:
    """A JSON log line below WARNING."""
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and record.get("level") in ("INFO", "DEBUG")


# --- setup ---------------------------------------------------------------------------------------


@dataclass
class Stack:
    url: str
    table: str
    dynamodb: str
    sqs: str
    work: Path
    violations: Path


def start_stack(stack: contextlib.ExitStack) -> Stack:
    """DynamoDB Local, moto server and the `LambdaPair`, each stopped by `stack` (in reverse order)."""
    sys.path.insert(0, str(ROOT))  # tests.support
    from moto.server import ThreadedMotoServer

    from tests.support.front_door import LambdaPair
    from tests.support.processes import free_port

    dynamodb = start_dynamodb_local(stack)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto server's access log
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    moto.start()
    stack.callback(moto.stop)
    host, port = moto.get_host_and_port()
    sqs = f"http://{host}:{port}"
    work = Path(tempfile.mkdtemp(prefix="lambda-mcp-soak-"))
    violations = work / "violations.txt"
    violations.touch()
    pair = LambdaPair(APP, work, dynamodb, sqs, violations)
    stack.callback(pair.stop)
    return Stack(pair.url, pair.table, dynamodb, sqs, work, violations)


def header(args: argparse.Namespace, jobs: list[str], stack: Stack) -> None:
    counts = Counter(jobs)
    print(__doc__.splitlines()[0])
    print(
        f"setup: 2 x `lambda-mcp dev --lambda {APP}` (buffered handler, one request at a time; task worker"
        " fed from the shared queue)"
    )
    print(f"       behind the alternating front door {stack.url}")
    print(f"       table {stack.table} on DynamoDB Local at {stack.dynamodb}; task queue on moto SQS at {stack.sqs}")
    print(f"       logs in {stack.work}")
    mix = ", ".join(f"{counts[k]} {LABELS[k]}" for k in LABELS)
    print(f"load:  {len(jobs)} calls, {args.concurrency} at a time, seed {args.seed}: {mix}")


# --- report --------------------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def latency_row(label: str, values: list[float], errors: int) -> str:
    if not values:
        return f"  {label:24} {0:6d} {'-':>8} {'-':>8} {'-':>8} {errors:7d}"
    ms = [v * 1000 for v in values]
    cells = f"{percentile(ms, 50):8.1f} {percentile(ms, 99):8.1f} {max(ms):8.1f}"
    return f"  {label:24} {len(values):6d} {cells} {errors:7d}"


@dataclass
class Outcome:
    wall: float
    statuses: dict[str, str]
    items: Counter[str]
    missing_ttl: Counter[str]
    ttl_examples: list[dict[str, Any]]
    violations: list[str]
    log_lines: list[str]

    @property
    def not_final(self) -> Counter[str]:
        return Counter(s for s in self.statuses.values() if s not in FINAL)


def report(load: Load, outcome: Outcome, wire: Wire) -> int:
    stats = load.stats
    per_kind = Counter(kind for kind, _ in stats.failures)
    print(f"\n  {'kind':24} {'ok':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'errors':>7}")
    for kind, label in LABELS.items():
        print(latency_row(label, stats.latencies.get(kind, []), per_kind[kind]))
    every = [v for values in stats.latencies.values() for v in values]
    print(latency_row("all calls", every, sum(per_kind[k] for k in LABELS)))
    print(f"\n  wall time                {outcome.wall:.1f} s")
    print(f"  calls per second         {stats.done / outcome.wall:.1f} ({wire.requests} HTTP requests in all)")
    races = stats.races
    print(f"  cancel races             {races['cancelled']} cancelled first, {races['completed']} completed first")
    causes = Counter(f.what for _, f in stats.failures)
    print(f"  errors                   {len(stats.failures)} (HTTP 5xx: {wire.server_errors}) {dict(causes) or ''}")
    not_final = outcome.not_final
    print(f"  tasks not final          {sum(not_final.values())} of {len(load.tasks)} {dict(not_final) or ''}")
    scanned = sum(outcome.items.values())
    no_ttl = sum(outcome.missing_ttl.values())
    print(f"  items without TTL        {no_ttl} of {scanned} scanned {dict(outcome.missing_ttl) or ''}")
    print(f"  items by type            {dict(sorted(outcome.items.items()))}")
    print(f"  schema violations        {len(outcome.violations)} (the front door's recorder; not counted as errors)")
    print(f"  server log problems      {len(outcome.log_lines)} lines (not counted as errors)")
    details(stats.failures, outcome)
    return 1 if stats.failures or not_final or no_ttl else 0


def details(failures: list[tuple[str, CallFailed]], outcome: Outcome) -> None:
    for kind, failure in failures[:5]:
        print(f"\n  error ({kind}): {failure.what}\n    {failure.evidence}")
    for example in outcome.ttl_examples:
        print(f"\n  item without TTL: {json.dumps(example)[:500]}")
    for line in outcome.violations[:3] + outcome.log_lines[:5]:
        print(f"  {line}")


# --- main ------------------------------------------------------------------------------------


async def soak(args: argparse.Namespace, stack: Stack) -> int:
    rng = random.Random(args.seed)
    jobs = make_jobs(args.calls, rng)
    header(args, jobs, stack)
    wire = Wire(stack.url, args.concurrency)
    try:
        load = Load(wire, rng)
        wall = await load.run(jobs, args.concurrency)
        print(f"load done in {wall:.1f} s; settling {len(load.tasks)} tasks (up to {args.settle_seconds:.0f} s)")
        statuses = await settle_tasks(load, args.settle_seconds)
        check_races(load, statuses)
    finally:
        await wire.close()
    items, missing, examples = scan_ttl(stack.dynamodb, stack.table)
    violations = stack.violations.read_text().splitlines()
    outcome = Outcome(wall, statuses, items, missing, examples, violations, log_problems(stack.work))
    return report(load, outcome, wire)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000, help="calls in all (default 5000)")
    parser.add_argument("--concurrency", type=int, default=8, help="clients calling at once (default 8)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the mix and the arguments (default 1)")
    parser.add_argument("--settle-seconds", type=float, default=60.0, help="how long to wait for tasks to end")
    args = parser.parse_args()
    os.environ.update(FAKE_AWS)
    os.environ.pop("AWS_PROFILE", None)
    with contextlib.ExitStack() as stack:
        started = start_stack(stack)
        return asyncio.run(soak(args, started))


if __name__ == "__main__":
    raise SystemExit(main())
