"""Tasks under faults on the real wire (issue 28): the kit talks to Amazon DynamoDB Local and moto
server's SQS through a fault-injecting proxy (tests/support/fault_proxy.py), which can throttle, fail
with a 500, refuse a condition, or apply a write and then answer 500 (DynamoDB's ambiguous 5xx); the
real worker handler is fed by the local event source, and clients use the real HTTP endpoint.

One test per defect of the review, each failing before its fix; timings are scaled down (a worker
timeout of 1 s, a visibility timeout of 2 s, a sweep on demand).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest

from lambda_mcp.protocol.ids import TaskInputId
from lambda_mcp.storage.records import TaskRecord
from lambda_mcp.tasks.runtime import TaskRuntime
from tests.support import fault_app
from tests.support.client import MCPTestClient
from tests.support.polling import after, until
from tests.support.task_stack import ProxiedStack, proxied_stack

pytestmark = pytest.mark.anyio
ATTEMPTS = 6
"""The kit's clients try each request 6 times (standard mode) before they report a failure."""
CAPABILITIES = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}
TASKS = {"io.modelcontextprotocol/clientCapabilities": CAPABILITIES}


@dataclass
class Stack(ProxiedStack):
    async def status(self, task_id: str, status: str) -> TaskRecord:
        async def reached() -> TaskRecord | None:
            record = await self.record(task_id)
            return record if record is not None and record.status == status else None

        return await until(reached, what=f"task {task_id} to be {status}")


@pytest.fixture
def stack(dynamodb_local_url: str, moto_server_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    # a session (and its events) outlived by its tasks
    with proxied_stack(
        "reliability", monkeypatch, dynamodb_local_url, moto_server_url, fault_app.app, Stack, session_ttl_seconds=120
    ) as stack:
        yield stack


@pytest.fixture
async def running(stack: Stack) -> AsyncIterator[Stack]:
    source = stack.source().start()
    yield stack
    source.stop()


@pytest.fixture
async def client(stack: Stack) -> AsyncIterator[MCPTestClient]:
    mcp = MCPTestClient(stack.kit)
    yield mcp
    await mcp.close()


async def _modern_task(client: MCPTestClient, tool: str, label: str) -> str:
    created = await client.modern("tools/call", {"name": tool, "arguments": {"label": label}}, meta=TASKS)
    assert created.result["resultType"] == "task", created.body
    task_id: str = created.result["taskId"]
    return task_id


# -- 1. input rounds are outcomes, not crashes --------------------------------------------------------
@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_a_task_with_five_input_rounds_completes_through_the_sqs_worker(
    running: Stack, client: MCPTestClient, era: str
) -> None:
    """Every resumption is a claim; `attempts` counted them all, so a third round failed the task as
    "stopped before finishing, 3 times"."""
    label = secrets.token_hex(4)
    if era == "2026-07-28":
        task_id = await _modern_task(client, "five_rounds", label)
    else:
        await client.initialize(era, {"elicitation": {}})
        made = await client.legacy("tools/call", {"name": "five_rounds", "arguments": {"label": label}, "task": {}})
        task_id = made.result["task"]["taskId"]
    for round_ in range(5):
        parked = await running.status(task_id, "input_required")
        assert list(parked.input_requests) == [f"q{round_}"] and parked.attempts == 0
        answer = {"action": "accept", "content": {"text": f"a{round_}"}}
        if era == "2026-07-28":
            update = {"taskId": task_id, "inputResponses": {f"q{round_}": answer}}
            await client.modern("tasks/update", update, meta=TASKS, headers={"mcp-name": task_id})
        else:  # the client's response POST to the task's question (what tasks/result relayed)
            reply = {"jsonrpc": "2.0", "id": TaskInputId(task_id, f"q{round_}").format(), "result": answer}
            assert (await client.send("POST", json.dumps(reply), client.legacy_headers())).status == 202
    final = await running.settled(task_id)
    assert final.status == "completed", final.error
    assert final.result is not None and final.result["content"][0]["text"] == "a0/a1/a2/a3/a4"
    assert fault_app.runs[label] == 6  # one run per round, and the last


# -- 2. an ambiguous write of a notification ------------------------------------------------------------
async def test_a_log_line_whose_write_was_answered_500_after_it_landed_does_not_fail_the_task(
    running: Stack, client: MCPTestClient
) -> None:
    await client.initialize("2025-11-25")
    running.ddb.arm("dynamodb.PutItem", "written, then 500", containing="EVENT#task-")
    label = secrets.token_hex(4)
    made = await client.legacy("tools/call", {"name": "chatty", "arguments": {"label": label}, "task": {}})
    final = await running.settled(made.result["task"]["taskId"])
    assert running.ddb.injected["dynamodb.PutItem:written, then 500"] == 1
    assert final.status == "completed", final.error
    logged = [i for i in running.items("SESSION#") if "EVENT#task-" in i["sk"]["S"]]
    assert len(logged) == 3  # each line once: the retry that met its own write counted as done


# -- 3. the client is never told to retry a task that exists --------------------------------------------
async def test_a_task_create_answered_500_after_it_landed_is_one_task_that_runs_once(
    running: Stack, client: MCPTestClient
) -> None:
    running.ddb.arm("dynamodb.PutItem", "written, then 500", containing="TASK#")
    label = secrets.token_hex(4)
    task_id = await _modern_task(client, "counted", label)  # a CreateTaskResult, not -32603
    final = await running.settled(task_id)
    assert final.status == "completed" and fault_app.runs[label] == 1
    assert len([i for i in running.items("TASK#") if i["sk"]["S"] == "TASK"]) == 1


async def test_a_session_create_answered_500_after_it_landed_opens_the_session(
    running: Stack, client: MCPTestClient
) -> None:
    """The retry met its own session item and answered -32603 to `initialize`."""
    running.ddb.arm("dynamodb.PutItem", "written, then 500", containing='"SESSION"')
    opened = await client.initialize("2025-11-25")
    assert running.ddb.injected["dynamodb.PutItem:written, then 500"] == 1
    assert opened.status == 200 and "error" not in opened.body, opened.body
    assert (await client.legacy("tools/list", {})).status == 200


async def test_a_failed_call_marker_leaves_no_task_behind_so_the_retry_runs_the_tool_once(
    running: Stack, client: MCPTestClient
) -> None:
    """On 2025-11-25 the marker a cancel finds was written after the task was stored and queued: its
    failure answered 503 "retry", and the retry made a second task."""
    await client.initialize("2025-11-25")
    running.ddb.arm("dynamodb.UpdateItem", "server error", ATTEMPTS, containing="CALL#")
    label = secrets.token_hex(4)
    call = {"name": "counted", "arguments": {"label": label}, "task": {}}
    refused = await client.legacy("tools/call", call)
    assert refused.status == 503
    assert [i for i in running.items("TASK#") if i["sk"]["S"] == "TASK"] == []  # nothing to run twice
    made = await client.legacy("tools/call", call)  # the client retries, as told
    final = await running.settled(made.result["task"]["taskId"])
    assert final.status == "completed" and fault_app.runs[label] == 1


# -- 4. a crashed task ends failed before it could expire ----------------------------------------------
async def test_no_task_lives_shorter_than_its_last_chance_and_a_crashing_one_ends_failed(
    stack: Stack,
) -> None:
    deployed = TaskRuntime(stack.runtime.store, stack.runtime.executor, stack.runtime.execute)
    assert deployed.min_ttl_ms >= (3 * (905 + 300) + 300) * 1000  # the template's worker timeout and sweeps
    runtime = stack.runtime
    lease = 1 + 0.1
    assert runtime.min_ttl_ms >= (runtime.max_attempts * (lease + 1) + 1) * 1000
    record = await runtime.create(
        owner="principal:t",
        method="tools/call",
        params={"name": "always_crash", "arguments": {"label": secrets.token_hex(4)}},
        wire="modern",
        protocol_version="2026-07-28",
        client_capabilities={},
        requested_ttl_ms=1,  # the client asks for a shorter life than the task's last chance
    )
    assert record.ttl_ms == runtime.min_ttl_ms
    stack.sqs.purge_queue(QueueUrl=stack.queue_url)
    for _ in range(runtime.max_attempts):  # each run kills its worker; the sweeper gives it another
        with pytest.raises(fault_app.WorkerKilled):
            await runtime.work(record.task_id, "doomed", lease_seconds=0.2)
        await until(after(0.25), what="the lease to run out")
    await until(lambda: _swept(runtime, "failed"), what="the sweeper to fail the task")
    final = await stack.record(record.task_id)
    assert final is not None and final.status == "failed" and "3 times" in (final.error or {}).get("message", "")


async def _swept(runtime: TaskRuntime, outcome: str) -> bool:
    return bool((await runtime.sweep())[outcome])


async def test_a_task_that_expired_while_working_is_counted(stack: Stack) -> None:
    runtime = stack.runtime
    now = time.time()
    record = TaskRecord(
        task_id="expired" + secrets.token_hex(8),
        owner="principal:t",
        method="tools/call",
        params={},
        created_at=now - 10,
        expires_at=now - 1,
        ttl_ms=1,
        poll_interval_ms=500,
        due_at=now - 5,
    )
    await runtime.store.create(record)
    assert (await runtime.sweep())["expired"] == 1


# -- 5. one failed read does not end the cancel watch ---------------------------------------------------
async def test_a_cancel_stops_the_run_even_after_a_failed_watch_read(running: Stack, client: MCPTestClient) -> None:
    running.ddb.arm("dynamodb.GetItem", "server error", ATTEMPTS, containing='"STOP"')  # one whole read fails
    label = secrets.token_hex(4)
    task_id = await _modern_task(client, "looping", label)
    await until(lambda: fault_app.runs[f"{label}:steps"] > 0, what="the run to start")
    await until(lambda: running.ddb.injected["dynamodb.GetItem:server error"] == ATTEMPTS, what="a failed watch")
    cancel = await client.modern("tasks/cancel", {"taskId": task_id}, meta=TASKS, headers={"mcp-name": task_id})
    assert cancel.status == 200
    steps = fault_app.runs[f"{label}:steps"]
    await until(running.drained, what="the run to stop (its message settled)")  # it would run 20 s
    assert fault_app.runs[f"{label}:steps"] - steps < 100  # stopped within seconds


# -- 6. a task's events live as long as the task --------------------------------------------------------
async def test_a_tasks_log_lines_expire_with_the_task_not_the_session(running: Stack, client: MCPTestClient) -> None:
    await client.initialize("2025-11-25")
    made = await client.legacy("tools/call", {"name": "chatty", "arguments": {"label": "ttl"}, "task": {}})
    final = await running.settled(made.result["task"]["taskId"])
    events = [i for i in running.items("SESSION#") if "EVENT#task-" in i["sk"]["S"]]
    assert events and {int(i["expires_at"]["N"]) for i in events} == {int(final.expires_at)}


# -- the review's risks --------------------------------------------------------------------------------
async def test_an_ambiguous_claim_goes_on_at_once_instead_of_waiting_for_the_sweeper(running: Stack) -> None:
    label = secrets.token_hex(4)
    task = await running.runtime.create(
        owner="principal:t",
        method="tools/call",
        params={"name": "counted", "arguments": {"label": label, "seconds": 0.1}},
        wire="modern",
        protocol_version="2026-07-28",
        client_capabilities={},
    )
    running.ddb.arm("dynamodb.PutItem", "written, then 500", containing='lease_owner\\":\\"')  # the claim
    final = await running.settled(task.task_id, timeout=10)  # the sweeper runs only on demand here
    assert final.status == "completed" and fault_app.runs[label] == 1 and final.attempts == 1


async def test_the_sweeper_pages_through_every_due_task_and_queues_them_in_batches(stack: Stack) -> None:
    runtime, now = stack.runtime, time.time()
    due = [
        TaskRecord(
            task_id=f"due{index:04d}" + secrets.token_hex(6),
            owner="principal:t",
            method="tools/call",
            params={"name": "counted", "arguments": {"label": "x"}},
            created_at=now - 100,
            expires_at=now + 3600,
            ttl_ms=3_600_000,
            poll_interval_ms=500,
            due_at=now - 50,
        )
        for index in range(150)  # more than a page (100): the sweeper used to page on only past expired rows
    ]
    for start in range(0, len(due), 25):
        await asyncio.gather(*(runtime.store.create(record) for record in due[start : start + 25]))
    # the batches go at once: the faults aim at one of them (the one with the task `due0005...`)
    stack.sqs_proxy.arm("sqs.SendMessageBatch", "server error", ATTEMPTS, containing="due0005")
    counts = await runtime.sweep(budget_seconds=60)
    # a batch whose request raised may have been delivered: ambiguous, not refused (issue 41)
    assert counts["requeued"] == 140 and counts["ambiguous"] == 10 and counts["errors"] == 0
    assert stack.sqs_proxy.log["sqs.SendMessageBatch"] == 15 + ATTEMPTS - 1  # 10 a request, not 150
    queued: set[str] = set()
    while got := stack.sqs.receive_message(QueueUrl=stack.queue_url, MaxNumberOfMessages=10).get("Messages"):
        queued.update(json.loads(message["Body"])["taskId"] for message in got)
    assert len(queued) == 140
    unsent = set(await runtime.store.list_due(now + 10_000, limit=1000)) - queued
    assert len(unsent) == 10  # still in the index: due again after `requeue_after_seconds`
    assert {getattr(await stack.record(task_id), "status", None) for task_id in unsent} == {"working"}


async def test_every_run_of_a_task_sees_the_same_idempotency_key(running: Stack) -> None:
    label = secrets.token_hex(4)
    task = await running.runtime.create(
        owner="principal:t",
        method="tools/call",
        params={"name": "keyed", "arguments": {"label": label}},
        wire="modern",
        protocol_version="2026-07-28",
        client_capabilities={},
    )
    final = await running.settled(task.task_id)
    assert final.status == "completed"
    assert fault_app.keys_seen[label] == [f"task:{task.task_id}"] * 2  # the crashed run and the one after
