"""Storage and queue faults on real wires (issue 13): Amazon DynamoDB Local and moto server's SQS, with
faults injected into the kit's own botocore clients just before a request would be sent, so each client's
standard-mode retry logic meets them as it would meet AWS's: throttling, 500s, read timeouts, an
unreachable queue.

Every DynamoDB or SQS operation that a step of a session makes (initialize, a call, creating and polling a
task, answering a suspended call, resuming it) is failed in turn:
- a burst shorter than the client's attempts is retried by the client, and the step succeeds;
- a lasting fault is answered 503 with `Retry-After` (never a 500, never internal text), and the same
  request succeeds once the fault is gone: no answer is lost and no task is left stuck.
The worker meets faults too: a claim or a finish that fails leaves the message to be redelivered, and the
task completes. Backoff delays are cut to milliseconds; the retry decisions are botocore's own.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import EndpointConnectionError, ReadTimeoutError
from botocore.retries.standard import ExponentialBackoff

from lambda_mcp.config import Settings
from lambda_mcp.kit import Kit, Stores, build_kit
from lambda_mcp.local.poller import LocalEventSource
from lambda_mcp.protocol.errors import UNAVAILABLE
from lambda_mcp.storage.dynamodb._client import default_client
from lambda_mcp.tasks import sqs as task_queue
from lambda_mcp.worker import handle_event
from tests.support import fault_app
from tests.support.client import Exchange, MCPTestClient
from tests.support.polling import until
from tests.support.task_stack import fresh_aws

pytestmark = pytest.mark.anyio
ATTEMPTS = 6
"""The kit's clients try a request 6 times (standard retry mode, `max_attempts` 5 retries) before failing."""
ERRORS = {
    "throttled": (400, "ProvisionedThroughputExceededException"),
    "throttling": (400, "ThrottlingException"),
    "server error": (500, "InternalServerError"),
}
KINDS = ["throttled", "server error", "timeout", "throttling"]


class _Body:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


@dataclass
class Faults:
    """Fails chosen operations (`"dynamodb.UpdateItem"`, `"sqs.SendMessage"`) of the clients it is attached to."""

    armed: dict[str, list[Any]] = field(default_factory=dict)  # operation -> [kind, calls to let by, failures left]
    seen: list[str] = field(default_factory=list)
    injected: int = 0

    def attach(self, client: Any) -> Any:
        client.meta.events.register("before-send", self._before_send)
        return client

    def arm(self, operation: str, kind: str, times: int = -1, *, after: int = 0) -> None:
        """Fail `operation` `times` times in a row (-1: until cleared), once `after` calls of it went through."""
        self.armed[operation] = [kind, after, times]

    def clear(self) -> None:
        self.armed.clear()

    def _before_send(self, request: Any, event_name: str, **_: Any) -> AWSResponse | None:
        operation = event_name.removeprefix("before-send.")
        self.seen.append(operation)
        plan = self.armed.get(operation)
        if plan is None or plan[2] == 0:
            return None
        if plan[1] > 0:
            plan[1] -= 1
            return None
        plan[2] -= 1 if plan[2] > 0 else 0
        self.injected += 1
        kind = plan[0]
        if kind == "timeout":
            raise ReadTimeoutError(endpoint_url=request.url)
        if kind == "unreachable":
            raise EndpointConnectionError(endpoint_url=request.url)
        status, code = ERRORS[kind]
        body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": "injected"})
        headers = {"x-amzn-RequestId": "injected", "Content-Type": "application/x-amz-json-1.0"}
        return AWSResponse(request.url, status, headers, _Body(body.encode()))


@dataclass
class Stack:
    kit: Kit
    faults: Faults
    table: str
    sqs: Any
    queue_url: str
    dead_letter_url: str
    dead_letter_arn: str

    def client(self) -> MCPTestClient:
        return MCPTestClient(self.kit)

    def tasks(self) -> list[dict[str, Any]]:
        """Every task item in the table (a Scan: only tests do this)."""
        items = boto3.client("dynamodb").scan(TableName=self.table)["Items"]
        return [i for i in items if i["pk"]["S"].startswith("TASK#")]


@pytest.fixture
def stack(dynamodb_local_url: str, moto_server_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    monkeypatch.setattr(ExponentialBackoff, "delay_amount", lambda self, context: 0.002)
    with fresh_aws("faults", monkeypatch, dynamodb_local_url, moto_server_url, max_receives=5) as (table, sqs, queues):
        queue_url, arn = queues.url, queues.dead_letter_arn
        faults = Faults()
        ddb = faults.attach(default_client())  # the kit's own client factory: its retry settings are under test
        task_queue.use_client(queue_url, faults.attach(task_queue.default_client()))
        settings = Settings(table_name=table, task_queue_url=queue_url, task_dead_letter_arn=arn, state_key=b"k" * 32)
        stores = Stores.dynamodb(table, client=ddb)
        kit = build_kit(fault_app.app, settings, streaming=False, local=True, stores=stores)
        yield Stack(kit, faults, table, sqs, queue_url, queues.dead_letter_url, arn)


# -- the steps of a session ------------------------------------------------------------------------------
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}, "tasks": {}},
        "clientInfo": {"name": "fault-test", "version": "1"},
    },
}
ANSWER = {"action": "accept", "content": {"name": "ada"}}
State = dict[str, Any]


@dataclass
class Step:
    """One request of a session: `setup` brings a fresh session to just before it (never faulted)."""

    name: str
    setup: Callable[[MCPTestClient], Awaitable[State]]
    run: Callable[[MCPTestClient, State], Awaitable[Exchange]]
    succeeded: Callable[[Exchange], bool]


async def _nothing(client: MCPTestClient) -> State:
    return {}


async def _session(client: MCPTestClient) -> State:
    await client.initialize(capabilities=INITIALIZE["params"]["capabilities"])
    return {}


async def _with_task(client: MCPTestClient) -> State:
    await _session(client)
    created = await client.legacy("tools/call", {"name": "counted", "arguments": {"label": "x"}, "task": {}})
    return {"task": created.result["task"]["taskId"]}


async def _suspended(client: MCPTestClient) -> State:
    await _session(client)
    call = await client.legacy("tools/call", {"name": "ask", "arguments": {}})
    (ask,) = [m for m in call.messages if m.get("method") == "elicitation/create"]
    return {"ask": ask, "event": call.last_event_id}


async def _answered(client: MCPTestClient) -> State:
    state = await _suspended(client)
    assert (await _answer(client, state)).status == 202
    return state


async def _answer(client: MCPTestClient, state: State) -> Exchange:
    response = {"jsonrpc": "2.0", "id": state["ask"]["id"], "result": ANSWER}
    return await client.send("POST", json.dumps(response), client.legacy_headers())


async def _resume(client: MCPTestClient, state: State) -> Exchange:
    headers = {**client.legacy_headers(), "accept": "text/event-stream", "last-event-id": state["event"]}
    return await client.send("GET", b"", headers)


def _resumed(exchange: Exchange) -> bool:
    final = exchange.messages[-1] if exchange.messages else {}
    return "result" in final and final["result"]["content"][0]["text"] == "hello ada"


STEPS = [
    Step(
        "initialize",
        _nothing,
        lambda c, s: c.send("POST", json.dumps(INITIALIZE)),
        lambda e: e.status == 200 and "mcp-session-id" in e.headers and "result" in e.body,
    ),
    Step(
        "a call that publishes a change",
        _session,
        lambda c, s: c.legacy("tools/call", {"name": "publish", "arguments": {}}),
        lambda e: e.status == 200 and e.body.get("result", {}).get("content", [{}])[0].get("text") == "published",
    ),
    Step(
        "creating a task",
        _session,
        lambda c, s: c.legacy("tools/call", {"name": "counted", "arguments": {"label": "x"}, "task": {}}),
        lambda e: e.status == 200 and e.body.get("result", {}).get("task", {}).get("status") == "working",
    ),
    Step(
        "polling a task",
        _with_task,
        lambda c, s: c.legacy("tasks/get", {"taskId": s["task"]}),
        lambda e: e.status == 200 and e.body.get("result", {}).get("status") == "working",
    ),
    Step("answering a suspended call", _suspended, _answer, lambda e: e.status == 202),
    Step("resuming the answered call", _answered, _resume, _resumed),
]


def _calls(seen: list[str]) -> list[tuple[str, int]]:
    """Each call as (operation, how many calls of it came before): every call path of a step, in order."""
    return [(operation, seen[:index].count(operation)) for index, operation in enumerate(seen)]


def _unavailable(exchange: Exchange) -> bool:
    text = exchange.text
    return (
        exchange.status == 503
        and exchange.headers.get("retry-after") == "1"
        and json.loads(text)["error"] == {"code": -32603, "message": UNAVAILABLE}
        and "Traceback" not in text
        and "botocore" not in text
    )


@pytest.mark.parametrize("step", STEPS, ids=[s.name for s in STEPS])
async def test_every_operation_of_a_step_retries_a_burst_and_answers_503_for_a_lasting_fault(
    stack: Stack, step: Step
) -> None:
    faults = stack.faults
    client = stack.client()
    try:
        state = await step.setup(client)
        faults.seen.clear()
        clean = await step.run(client, state)
        assert step.succeeded(clean), clean.text
        calls = _calls(faults.seen)
        assert calls, "the step touched no storage: nothing to fault"
    finally:
        await client.close()
    for index, (operation, before) in enumerate(calls):
        kind = "unreachable" if operation.startswith("sqs.") else KINDS[index % len(KINDS)]
        for times, lasting in ((ATTEMPTS - 1, False), (-1, True)):
            client = stack.client()
            try:
                state = await step.setup(client)
                faults.injected = 0
                faults.arm(operation, kind, times, after=before)
                answered = await step.run(client, state)
                faults.clear()
                what = f"{step.name}: {operation} #{before + 1} {kind} x{times}"
                assert faults.injected == (ATTEMPTS if lasting else ATTEMPTS - 1), what
                if not lasting:
                    assert step.succeeded(answered), f"{what} was not retried: {answered.status} {answered.text}"
                    continue
                assert _unavailable(answered), f"{what}: {answered.status} {answered.text}"
                again = await step.run(client, state)  # the client's retry, with the fault gone
                assert step.succeeded(again), f"{what}, then again: {again.status} {again.text}"
                if step.run is _answer:  # the answer, retried, reaches the suspended call
                    assert _resumed(await _resume(client, state)), what
            finally:
                faults.clear()
                await client.close()
    for item in stack.tasks():  # a task whose creation failed is final, never left working without a lease
        assert item["status"]["S"] in ("working", "failed", "completed"), item
        if item["status"]["S"] == "working":
            assert "due_sk" in item, item


async def test_a_task_whose_queue_message_fails_is_failed_and_answered_503(stack: Stack) -> None:
    client = stack.client()
    try:
        await _session(client)
        stack.faults.arm("sqs.SendMessage", "unreachable")
        answered = await client.legacy("tools/call", {"name": "counted", "arguments": {"label": "q"}, "task": {}})
        assert _unavailable(answered)
        (item,) = stack.tasks()
        assert item["status"]["S"] == "failed" and "due_sk" not in item  # final, out of the due index
    finally:
        await client.close()


async def test_a_task_resumed_while_the_queue_is_down_is_queued_by_the_sweeper(stack: Stack) -> None:
    client = stack.client()
    source: LocalEventSource | None = None
    try:
        await _session(client)
        created = await client.legacy("tools/call", {"name": "approve", "arguments": {}, "task": {}})
        task_id = created.result["task"]["taskId"]
        source = _worker(stack, sweep_seconds=3600).start()  # this test sweeps by hand
        assert stack.kit.task_runtime is not None
        parked = await _wait(stack, task_id, lambda r: r.status == "input_required")
        (key,) = parked.input_requests
        stack.faults.arm("sqs.SendMessage", "unreachable")
        answered = await stack.kit.task_runtime.answer(parked, {key: {"action": "accept", "content": {"ok": True}}})
        assert answered.status == "working"
        stack.faults.clear()
        held = await stack.kit.task_runtime.store.get(task_id, time.time())
        assert held is not None and held.status == "working" and held.due_at <= time.time()
        assert (await stack.kit.task_runtime.sweep())["requeued"] == 1
        final = await _wait(stack, task_id, lambda r: r.terminal)
        assert final.status == "completed" and final.result is not None
        assert final.result["content"][0]["text"] == "approved=True"
    finally:
        if source is not None:
            source.stop()
        await client.close()


@pytest.fixture
async def worker(stack: Stack) -> AsyncIterator[Stack]:
    source = _worker(stack).start()
    yield stack
    source.stop()


def _worker(stack: Stack, sweep_seconds: float = 1) -> LocalEventSource:
    assert stack.kit.task_runtime is not None
    runtime = stack.kit.task_runtime

    def handler(event: dict[str, Any], context: Any) -> Any:
        return handle_event(runtime, event, context, stack.dead_letter_arn, stack.kit.stores.changes)

    return LocalEventSource(
        stack.sqs, stack.queue_url, stack.dead_letter_url, handler, worker_timeout_ms=1000, sweep_seconds=sweep_seconds
    )


async def _wait(stack: Stack, task_id: str, done: Callable[[Any], bool], timeout: float = 40) -> Any:
    runtime = stack.kit.task_runtime
    assert runtime is not None

    async def reached() -> Any:
        record = await runtime.store.get(task_id, time.time())
        return record if record is not None and done(record) else None

    return await until(reached, timeout=timeout, what=f"task {task_id} (stuck?)")


async def _create(stack: Stack, label: str, seconds: float = 0.3) -> str:
    assert stack.kit.task_runtime is not None
    record = await stack.kit.task_runtime.create(
        owner="principal:faults",
        method="tools/call",
        params={"name": "counted", "arguments": {"label": label, "seconds": seconds}},
        wire="modern",
        protocol_version="2026-07-28",
        client_capabilities={},
    )
    return record.task_id


async def test_a_worker_whose_claim_fails_leaves_the_message_and_the_task_completes_once(stack: Stack) -> None:
    label = secrets.token_hex(4)
    task_id = await _create(stack, label)
    stack.faults.arm("dynamodb.PutItem", "throttled", ATTEMPTS + 2)  # the first claim fails outright
    source = _worker(stack).start()
    try:
        final = await _wait(stack, task_id, lambda r: r.terminal)
    finally:
        source.stop()
    assert stack.faults.injected == ATTEMPTS + 2
    assert final.status == "completed" and fault_app.runs[label] == 1 and final.attempts == 1


async def test_a_worker_whose_finish_fails_reruns_the_task_after_its_lease(worker: Stack) -> None:
    label = secrets.token_hex(4)
    task_id = await _create(worker, label, seconds=0.6)
    await _wait(worker, task_id, lambda r: r.lease_owner is not None)  # claimed and running
    worker.faults.arm("dynamodb.PutItem", "server error")  # its result cannot be saved
    await until(lambda: worker.faults.injected >= ATTEMPTS, what="the finish to fail")
    worker.faults.clear()
    assert worker.faults.injected >= ATTEMPTS
    final = await _wait(worker, task_id, lambda r: r.terminal)
    assert final.status == "completed" and fault_app.runs[label] == 2 and final.attempts == 2


async def test_hostile_ids_never_reach_dynamodb_keys(stack: Stack) -> None:
    """DynamoDB refuses a key over 1 KB (or 2 KB for a partition key) with a ValidationException, which
    would be a 500: over-long ids are refused, or matched against nothing, before any key is built."""
    client = stack.client()
    try:
        await _session(client)
        stack.faults.seen.clear()
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "r" * 2000}}
        assert (await client.send("POST", json.dumps(cancel), client.legacy_headers())).status == 202
        long_id = {"jsonrpc": "2.0", "id": "i" * 2000, "method": "ping"}
        assert (await client.send("POST", json.dumps(long_id), client.legacy_headers())).status == 400
        assert (await client.legacy("ping", headers={"mcp-session-id": "s" * 3000})).status == 404
        task = await client.legacy("tasks/get", {"taskId": "t" * 3000})
        assert task.status == 200 and task.error["code"] == -32602
        headers = {**client.legacy_headers(), "accept": "text/event-stream", "last-event-id": "e" * 5000}
        assert (await client.send("GET", b"", headers)).status == 404
        assert all(op == "dynamodb.GetItem" for op in stack.faults.seen)  # only the session, read by its own id
    finally:
        await client.close()
