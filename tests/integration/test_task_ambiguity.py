"""Writes whose outcome is unknown on the task path, past botocore's retries (issue 41, task side).

Real wires as in test_task_reliability.py: Amazon DynamoDB Local and moto server's SQS behind the fault
proxy (tests/support/fault_proxy.py), the real worker handler fed by the local event source, clients on
the real HTTP endpoint with a bearer token (auth `jwt`). A "dry quota" is a fault on every attempt of
one request (`times=ATTEMPTS`, aimed with `containing`): the kit's client gives up, as it does when its
retry quota has run dry. One test or more per finding, each failing before its fix.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lambda_mcp.storage.records import TaskRecord
from lambda_mcp.tasks.execution import Executor
from lambda_mcp.tasks.runtime import TaskRuntime
from tests.support import fault_app
from tests.support.client import MCPTestClient
from tests.support.issuer import LocalIssuer
from tests.support.polling import after, until
from tests.support.processes import free_port
from tests.support.task_stack import ProxiedStack, proxied_stack

pytestmark = pytest.mark.anyio
ATTEMPTS = 6
"""The kit's clients try each request 6 times (standard mode) before they report a failure."""
RESOURCE = "http://127.0.0.1:8000/mcp"
TASKS = {
    "io.modelcontextprotocol/clientCapabilities": {
        "elicitation": {},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    }
}
CREATE = '"ConditionExpression": "attribute_not_exists(pk)"'
"""In the body of a task's create (a PutItem) and of nothing else the kit writes here."""
TASK_READ = '"sk": {"S": "TASK"}'
"""In the body of a read of a task's item (not of its stop flag)."""


@dataclass
class Stack(ProxiedStack):
    def tasks(self) -> list[dict[str, Any]]:
        return [i for i in self.items("TASK#") if i["sk"]["S"] == "TASK"]


@pytest.fixture
def stack(
    dynamodb_local_url: str, moto_server_url: str, issuer: LocalIssuer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Stack]:
    with proxied_stack(
        "ambiguity",
        monkeypatch,
        dynamodb_local_url,
        moto_server_url,
        fault_app.app,
        Stack,
        auth="jwt",
        auth_issuer=issuer.url,
    ) as stack:
        yield stack


@pytest.fixture
async def running(stack: Stack) -> AsyncIterator[Stack]:
    source = stack.source().start()
    yield stack
    source.stop()


@pytest.fixture
async def client(stack: Stack, issuer: LocalIssuer) -> AsyncIterator[MCPTestClient]:
    mcp = MCPTestClient(stack.kit)
    mcp.headers["authorization"] = "Bearer " + issuer.token(RESOURCE, sub="alice", scope=None)
    yield mcp
    await mcp.close()


def _call(tool: str, label: str, request_id: int | str, **arguments: Any) -> str:
    """A 2026 `tools/call` that creates a task, as JSON: sent again as is, it is the client's retry."""
    params = {"name": tool, "arguments": {"label": label, **arguments}, "_meta": {**_META, **TASKS}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
_ROUTING = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}


async def _send(client: MCPTestClient, body: str) -> tuple[int, dict[str, Any]]:
    tool = json.loads(body)["params"]["name"]
    answered = await client.send("POST", body, {**_ROUTING, "mcp-name": tool})
    return answered.status, answered.body


async def _created(client: MCPTestClient, body: str) -> str:
    status, answer = await _send(client, body)
    assert status == 200 and answer["result"]["resultType"] == "task", answer
    task_id: str = answer["result"]["taskId"]
    return task_id


async def _swept_past_due(stack: Stack) -> None:
    """Sweep once every task is due (`requeue_after_seconds` is 0.2 s here): a task nobody runs is queued."""
    await until(after(0.3), what="every task to be due")
    await stack.runtime.sweep()


# -- 1. a create written, then answered 500 on every attempt ---------------------------------------------
async def test_a_create_past_its_retries_whose_reread_fails_is_voided_and_the_retry_runs_the_tool_once(
    running: Stack, client: MCPTestClient
) -> None:
    """The client got 503 and retried; the sweeper later ran the first task too: the tool ran twice."""
    running.runtime.requeue_after_seconds = 0.2  # a lost message is due at once: the sweep below would run it
    running.ddb.arm("dynamodb.PutItem", "written, then 500", ATTEMPTS, containing=CREATE)
    running.ddb.arm("dynamodb.GetItem", "server error", ATTEMPTS, containing=TASK_READ)  # the re-read fails
    label = secrets.token_hex(4)
    call = _call("counted", label, 1)
    status, answer = await _send(client, call)
    assert status == 503, answer
    assert running.ddb.injected["dynamodb.GetItem:server error"] == ATTEMPTS  # it tried to confirm
    (voided,) = running.tasks()  # the orphan, failed before the 503 went out
    assert voided["status"]["S"] == "failed" and "due_sk" not in voided
    voided_id = voided["pk"]["S"].removeprefix("TASK#")
    got = await client.modern("tasks/get", {"taskId": voided_id}, meta=TASKS, headers={"mcp-name": voided_id})
    assert got.result["status"] == "failed" and got.result["error"]["data"] == {"retryable": True}
    assert "storage did not confirm" in got.result["error"]["message"]
    task_id = await _created(client, call)  # the client's retry, as told: a new task
    assert task_id != voided_id
    final = await running.settled(task_id)
    assert final.status == "completed"
    await _swept_past_due(running)
    await until(running.drained, what="whatever the sweep queued to be run")
    assert fault_app.runs[label] == 1 and client.recorder.violations == []


async def test_a_create_past_its_retries_that_landed_answers_the_task_that_runs_once(
    running: Stack, client: MCPTestClient
) -> None:
    """A create that landed and was answered 500 on all its attempts was 503 and an orphan for the sweeper."""
    running.runtime.requeue_after_seconds = 0.2
    running.ddb.arm("dynamodb.PutItem", "written, then 500", ATTEMPTS, containing=CREATE)
    label = secrets.token_hex(4)
    task_id = await _created(client, _call("counted", label, 1))  # a CreateTaskResult, not a 503
    assert running.ddb.injected["dynamodb.PutItem:written, then 500"] == ATTEMPTS
    final = await running.settled(task_id)
    await _swept_past_due(running)
    await until(running.drained, what="whatever the sweep queued to be run")
    assert final.status == "completed" and fault_app.runs[label] == 1 and len(running.tasks()) == 1


# -- 2. an SQS send that lands on every attempt and never answers 200 ------------------------------------
class _SlowAnswer:
    """The real SQS executor, whose failed send is reported only once a worker claimed the task (one of the
    messages that landed reached a worker while the client still waited for the send's answer)."""

    def __init__(self, inner: Executor, stack: Stack) -> None:
        self.inner, self.stack = inner, stack

    async def submit(self, task_id: str) -> None:
        try:
            await self.inner.submit(task_id)
        except Exception:
            await until(lambda: self._claimed(task_id), what="a worker to claim the task")
            raise

    async def _claimed(self, task_id: str) -> bool:
        record = await self.stack.record(task_id)
        return record is not None and record.lease_owner is not None

    def cancel(self, task_id: str) -> None:
        self.inner.cancel(task_id)


async def test_a_send_that_landed_though_reported_failed_answers_the_claimed_task_and_runs_it_once(
    running: Stack, client: MCPTestClient
) -> None:
    """The create overwrote the claimed task `failed: could not be queued`, answered 503, and the client's
    retry ran the tool again."""
    running.runtime.executor = _SlowAnswer(running.runtime.executor, running)
    running.sqs_proxy.arm("sqs.SendMessage", "written, then 500", ATTEMPTS)
    label = secrets.token_hex(4)
    task_id = await _created(client, _call("counted", label, 1, seconds=0.5))
    final = await running.settled(task_id)
    assert final.status == "completed" and final.error is None
    await until(running.drained, what="the other deliveries to be settled")
    assert fault_app.runs[label] == 1


async def test_a_send_reported_failed_before_any_claim_fails_the_task_and_the_retry_makes_one_that_runs(
    stack: Stack, client: MCPTestClient
) -> None:
    """No worker yet: the task is failed at version 0 (its messages find it final), and the client's retry
    with the same id, though within the retry window, makes a new task: the first was failed by its create."""
    stack.sqs_proxy.arm("sqs.SendMessage", "written, then 500", ATTEMPTS)
    label = secrets.token_hex(4)
    call = _call("counted", label, 7)
    status, answer = await _send(client, call)
    assert status == 503, answer
    (failed,) = stack.tasks()
    assert failed["status"]["S"] == "failed" and failed["version"]["N"] == "1"
    source = stack.source().start()  # the worker meets the messages that landed, then the retry's
    try:
        task_id = await _created(client, call)
        final = await stack.settled(task_id)
        await until(stack.drained, what="every message to be settled")
    finally:
        source.stop()
    assert final.status == "completed" and fault_app.runs[label] == 1


# -- 3. a client's retry is safe ------------------------------------------------------------------------
async def test_a_retried_tools_call_gets_the_first_task_and_another_id_or_other_params_a_new_one(
    running: Stack, client: MCPTestClient
) -> None:
    label = secrets.token_hex(4)
    first = await _created(client, _call("counted", label, 41))
    assert await _created(client, _call("counted", label, 41)) == first  # its answer was lost: the retry
    other_id = await _created(client, _call("counted", label, 42))
    other_params = await _created(client, _call("counted", label, 41, seconds=0.2))
    assert len({first, other_id, other_params}) == 3
    for task_id in (first, other_id, other_params):
        assert (await running.settled(task_id)).status == "completed"
    assert fault_app.runs[label] == 3
    assert await _created(client, _call("counted", label, 41)) == first  # still the same, and finished


async def test_a_legacy_retry_in_its_session_gets_the_first_task_and_its_cancel_finds_it(
    running: Stack, client: MCPTestClient
) -> None:
    """JSON-RPC ids are per session: the same id in another session is another request."""
    await client.initialize("2025-11-25")
    label = secrets.token_hex(4)
    call = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": "call-1",
            "method": "tools/call",
            "params": {"name": "looping", "arguments": {"label": label, "seconds": 10}, "task": {}},
        }
    )
    first = (await client.send("POST", call, client.legacy_headers())).result["task"]["taskId"]
    again = (await client.send("POST", call, client.legacy_headers())).result["task"]["taskId"]
    assert again == first
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "call-1"}}
    assert (await client.send("POST", json.dumps(cancel), client.legacy_headers())).status == 202
    assert (await running.settled(first)).status == "cancelled"  # the marker names the task it was given
    await client.initialize("2025-11-25")  # a new session: the same id is a new request
    elsewhere = (await client.send("POST", call, client.legacy_headers())).result["task"]["taskId"]
    assert elsewhere != first
    await client.send("POST", json.dumps(cancel), client.legacy_headers())
    await until(running.drained, what="the runs to stop")


# -- 5. answers and cancels ---------------------------------------------------------------------------------
ANSWER = {"action": "accept", "content": {"ok": True}}
ANSWER_WRITE = 'input_responses\\":{\\"ok\\"'
"""In the body of the first write that records the answer to `approve`'s question."""


async def _parked(running: Stack, client: MCPTestClient) -> str:
    task_id = await _created(client, _call("approve", "unused", 1))
    await until(lambda: _status(running, task_id, "input_required"), what="the task to ask")
    return task_id


async def _status(running: Stack, task_id: str, status: str) -> TaskRecord | None:
    record = await running.record(task_id)
    return record if record is not None and record.status == status else None


async def _answer(client: MCPTestClient, task_id: str) -> int:
    update = {"taskId": task_id, "inputResponses": {"ok": ANSWER}}
    return (await client.modern("tasks/update", update, meta=TASKS, headers={"mcp-name": task_id})).status


async def test_an_answer_that_landed_past_its_retries_queues_the_task_at_once(
    running: Stack, client: MCPTestClient
) -> None:
    """The answer answered 503; its retry found nothing outstanding and queued nothing: the task waited
    for the sweeper (about 20 minutes)."""
    task_id = await _parked(running, client)
    running.ddb.arm("dynamodb.PutItem", "written, then 500", ATTEMPTS, containing=ANSWER_WRITE)
    assert await _answer(client, task_id) == 200
    final = await running.settled(task_id, timeout=10)  # no sweep runs here
    assert final.status == "completed" and final.result is not None
    assert final.result["content"][0]["text"] == "approved=True"


async def test_an_answer_that_cannot_be_confirmed_is_503_and_its_retry_queues_the_task(
    running: Stack, client: MCPTestClient
) -> None:
    task_id = await _parked(running, client)
    running.ddb.arm("dynamodb.PutItem", "written, then 500", ATTEMPTS, containing=ANSWER_WRITE)
    running.ddb.arm("dynamodb.GetItem", "server error", ATTEMPTS, containing=TASK_READ)
    assert await _answer(client, task_id) == 503
    assert await _answer(client, task_id) == 200  # the client's retry: the answer is there, the task waits
    final = await running.settled(task_id, timeout=10)
    assert final.status == "completed"


async def _cancelled_run_stops(running: Stack, client: MCPTestClient) -> int:
    """Start a 10 s run (a step every 0.05 s), cancel it; the steps it made after the cancel answered."""
    label = secrets.token_hex(4)
    task_id = await _created(client, _call("looping", label, 1, seconds=10))
    await until(lambda: fault_app.runs[f"{label}:steps"] > 0, what="the run to start")
    cancel = await client.modern("tasks/cancel", {"taskId": task_id}, meta=TASKS, headers={"mcp-name": task_id})
    assert cancel.status == 200 and await _status(running, task_id, "cancelled")
    steps = fault_app.runs[f"{label}:steps"]
    return await _steps_once_still(f"{label}:steps") - steps


async def _steps_once_still(counter: str) -> int:
    """The count once it stopped growing (still for 0.3 s: six steps' time); at most 15 s."""
    deadline = time.monotonic() + 15
    seen = -1
    while fault_app.runs[counter] != seen:
        assert time.monotonic() < deadline, "the run never stopped"
        seen = fault_app.runs[counter]
        await until(after(0.3), what="a pause between two counts")
    return seen


async def test_a_cancel_tries_its_stop_flag_again_and_the_run_stops(running: Stack, client: MCPTestClient) -> None:
    running.ddb.arm("dynamodb.PutItem", "server error", ATTEMPTS, containing='"STOP"')  # one whole write fails
    assert await _cancelled_run_stops(running, client) < 60  # 20 steps a second: stopped within 3 s
    assert running.ddb.injected["dynamodb.PutItem:server error"] == ATTEMPTS


async def test_a_run_whose_stop_flag_is_never_written_stops_on_its_cancelled_status(
    running: Stack, client: MCPTestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        from lambda_mcp.tasks import watch
    except ImportError:
        pass
    else:
        monkeypatch.setattr(watch, "RECORD_EVERY", 2)  # every 2 ticks here, a minute in production
    running.ddb.arm("dynamodb.PutItem", "server error", -1, containing='"STOP"')
    assert await _cancelled_run_stops(running, client) < 100  # within 5 s (it ran its 10 s, 200 steps)
    assert not [i for i in running.items("TASK#") if i["sk"]["S"] == "STOP"]


# -- 6. the TTL floor ----------------------------------------------------------------------------------------
async def test_a_task_whose_first_delivery_died_unclaimed_still_ends_failed_before_it_expires(stack: Stack) -> None:
    """The template's timings on a clock the test turns: a batch-mate crashed the invocation before the
    task's claim (a cycle, no attempt), then each of its 3 runs crashed, the sweeps as late as they come.
    The last sweep came 4,800 s after the create, past the former floor (3,915 s): it expired `working`."""
    now = [time.time()]
    base = stack.runtime
    runtime = TaskRuntime(base.store, base.executor, base.execute, clock=lambda: now[0])
    record = await runtime.create(
        owner="principal:t",
        method="tools/call",
        params={"name": "always_crash", "arguments": {"label": secrets.token_hex(4)}},
        wire="modern",
        protocol_version="2026-07-28",
        client_capabilities={},
        requested_ttl_ms=1,
    )
    start = now[0]
    stack.sqs.purge_queue(QueueUrl=stack.queue_url)  # delivered into an invocation a batch-mate killed
    for sweep_at in (1200, 2400, 3600):  # due (unclaimed at 900, then lease ends at +905), swept up to 300 s late
        now[0] = start + sweep_at
        assert await _swept(runtime, "requeued")
        with pytest.raises(fault_app.WorkerKilled):
            await runtime.work(record.task_id, "doomed", lease_seconds=905)
    now[0] = start + 4800
    assert await _swept(runtime, "failed")
    final = await runtime.store.get(record.task_id, now[0])
    assert final is not None and final.status == "failed" and "3 times" in (final.error or {}).get("message", "")
    assert runtime.min_ttl_ms == (4 * (905 + 300) + 300) * 1000  # 5,120 s: one cycle more than 3,915 s


async def _swept(runtime: TaskRuntime, outcome: str) -> bool:
    async def once() -> bool:
        return bool((await runtime.sweep())[outcome])

    return await until(once, what=f"the sweeper to have {outcome} the task")


# -- 7. honest batch counts ----------------------------------------------------------------------------------
async def test_a_batch_send_that_landed_but_answered_500_is_counted_ambiguous_not_failed(stack: Stack) -> None:
    """It was counted as 10 errors, though every message of it was delivered."""
    runtime, now = stack.runtime, time.time()
    due = [
        TaskRecord(
            task_id=f"due{index:02d}" + secrets.token_hex(6),
            owner="principal:t",
            method="tools/call",
            params={"name": "counted", "arguments": {"label": "x"}},
            created_at=now - 100,
            expires_at=now + 3600,
            ttl_ms=3_600_000,
            poll_interval_ms=500,
            due_at=now - 50,
        )
        for index in range(30)
    ]
    await asyncio.gather(*(runtime.store.create(record) for record in due))
    stack.sqs_proxy.arm("sqs.SendMessageBatch", "written, then 500", ATTEMPTS, containing="due05")
    counts = await runtime.sweep()
    assert (counts["requeued"], counts.get("ambiguous"), counts["errors"]) == (20, 10, 0)
    queued: set[str] = set()
    while got := stack.sqs.receive_message(QueueUrl=stack.queue_url, MaxNumberOfMessages=10).get("Messages"):
        queued.update(json.loads(message["Body"])["taskId"] for message in got)
    assert queued == {record.task_id for record in due}  # the ambiguous ten were delivered


# -- 8. dev --lambda --sqs-endpoint without a region in the environment ------------------------------------
APP = '''
from lambda_mcp import MCPApp

app = MCPApp("regionless")


@app.tool(task_support="required")
def add(a: int, b: int) -> int:
    """Add two numbers, as a task."""
    return a + b
'''


def _post(port: int, body: dict[str, Any], name: str) -> dict[str, Any]:
    import urllib.request

    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        data=json.dumps(body).encode(),
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            **_ROUTING,
            "mcp-method": body["method"],
            "mcp-name": name,
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def test_dev_lambda_with_an_sqs_endpoint_needs_no_region_in_the_environment(
    moto_server_url: str, tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text(APP)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAMBDA_MCP_", "AWS_ENDPOINT_URL"))}
    for name in ("AWS_DEFAULT_REGION", "AWS_REGION"):
        env.pop(name, None)
    port = free_port()
    lambda_mcp = str(Path(sys.executable).with_name("lambda-mcp"))
    command = [lambda_mcp, "dev", "app.py", "--lambda", "--sqs-endpoint", moto_server_url, "--port", str(port)]
    errors = tmp_path / "dev.err"
    with errors.open("w") as stderr:
        process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True)
    try:
        assert process.stdout is not None
        lines = []
        while len(lines) < 5 and not any(f"127.0.0.1:{port}/mcp" in line for line in lines):
            line = process.stdout.readline()  # the queues, then the serving banner (nothing: it crashed)
            if not line:
                break
            lines.append(line)
        assert any(f"127.0.0.1:{port}/mcp" in line for line in lines), (lines, errors.read_text())
        meta = {**_META, **TASKS}
        call = {"name": "add", "arguments": {"a": 2, "b": 3}, "_meta": meta}
        created = _post(port, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}, "add")
        task_id = created["result"]["taskId"]
        deadline = time.monotonic() + 20
        while True:  # the worker takes it from the queue on the SQS endpoint
            got = {"taskId": task_id, "_meta": meta}
            task = _post(port, {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": got}, task_id)["result"]
            if task["status"] == "completed" or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert task["status"] == "completed" and task["result"]["content"][0]["text"] == "5", task
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()
    assert "NoRegionError" not in errors.read_text()
