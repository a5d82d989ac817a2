"""The sweeper and a task's notifications under faults, on real wires (issue 41, findings 5 and 6): Amazon
DynamoDB Local and moto server's SQS, the kit's clients behind the fault proxy (tests/support/fault_proxy.py),
the real worker handler fed by the local event source, and clients on the real HTTP endpoint.

- Finding 5: one unreadable task item (a field this release does not know, a body that is not a record)
  stopped every sweep; now it is read past (an unknown field), or counted and taken out of the due index.
- The sweeper counts the never-claimed tasks it queues again (`TasksSweptUnclaimed`).
- Finding 6: a dropped progress notification and a re-run gave a stream `1, 3, 3, 4`; now each message is
  logged at its ordinal in the run, once, and the re-run fills the one that was dropped.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest

from lambda_mcp import Context, MCPApp
from lambda_mcp.observe.invocation import invocation
from lambda_mcp.protocol.ids import TaskInputId
from lambda_mcp.storage.records import TaskRecord
from tests.support.client import MCPTestClient
from tests.support.polling import until
from tests.support.task_stack import ProxiedStack, proxied_stack

pytestmark = pytest.mark.anyio
ATTEMPTS = 6
"""The kit's clients try each request 6 times (standard mode) before they report a failure."""

app = MCPApp("sweep-faults")
runs: dict[str, int] = {}


@app.tool(task_support="required")
async def stepped(ctx: Context, label: str) -> str:
    """Progress 1, 2, 3; a question (the task parks, and the answer re-runs it from the top); progress 4."""
    runs[label] = runs.get(label, 0) + 1
    for step in (1, 2, 3):
        await ctx.report_progress(step, 4, f"{label}-step{step}")
    await ctx.elicit("Go on?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="go")
    await ctx.report_progress(4, 4, f"{label}-step4")
    return f"{label} done"


@dataclass
class Stack(ProxiedStack):
    def event_items(self, task_id: str) -> list[dict[str, Any]]:
        """The task's events in the table (a Scan: only tests do this)."""
        items = boto3.client("dynamodb").scan(TableName=self.table)["Items"]
        return sorted((i for i in items if f"EVENT#task-{task_id}#" in i["sk"]["S"]), key=lambda i: i["sk"]["S"])

    def queued_ids(self) -> set[str]:
        ids: set[str] = set()
        while got := self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10).get("Messages"):
            ids.update(json.loads(message["Body"])["taskId"] for message in got)
        return ids


@pytest.fixture
def stack(dynamodb_local_url: str, moto_server_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    with proxied_stack(
        "sweepfaults", monkeypatch, dynamodb_local_url, moto_server_url, app, Stack, session_ttl_seconds=120
    ) as stack:
        yield stack


@pytest.fixture
async def running(stack: Stack) -> AsyncIterator[Stack]:
    source = stack.source().start()
    yield stack
    source.stop()


def _due(name: str, now: float, due_at: float, **fields: Any) -> TaskRecord:
    """A working task of the due index whose worker stopped, or whose message was lost."""
    return TaskRecord(
        task_id=f"{name}{secrets.token_hex(8)}",
        owner="principal:t",
        method="tools/call",
        params={"name": "stepped", "arguments": {"label": name}},
        created_at=now - 300,
        expires_at=now + 3600,
        ttl_ms=3_600_000,
        poll_interval_ms=500,
        due_at=due_at,
        **fields,
    )


def _overwrite(stack: Stack, task_id: str, **attributes: str) -> None:
    """Replace string attributes of a task's item behind the kit's back (what another release wrote)."""
    names = {f"#{name}": name for name in attributes}
    values = {f":{name}": {"S": value} for name, value in attributes.items()}
    boto3.client("dynamodb").update_item(
        TableName=stack.table,
        Key={"pk": {"S": f"TASK#{task_id}"}, "sk": {"S": "TASK"}},
        UpdateExpression="SET " + ", ".join(f"#{name} = :{name}" for name in attributes),
        ExpressionAttributeNames=names,
        ExpressionAttributeValues=values,
    )


# -- finding 5: one unreadable task item stops every sweep ------------------------------------------------
async def test_an_unreadable_task_item_is_set_aside_and_never_blocks_the_sweep(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    runtime, now = stack.runtime, time.time()
    garbled = _due("garbled", now, now - 200)  # due first: `list_due` reads it first, on every run
    newer = _due("newer", now, now - 100)  # written by a later release, with a field this one does not know
    normal = [_due(f"normal{index}", now, now - 50) for index in range(3)]
    for record in (garbled, newer, *normal):
        await runtime.store.create(record)
    _overwrite(stack, garbled.task_id, body="{not json")
    body = {**newer.as_dict(), "added_by_a_later_release": {"x": 1}}
    _overwrite(stack, newer.task_id, body=json.dumps(body), listing=json.dumps(body))

    with caplog.at_level(logging.WARNING, logger="lambda_mcp"):
        counts = await runtime.sweep()
    assert counts["unsweepable"] == 1 and counts["errors"] == 0
    assert counts["requeued"] == 4  # the three, and the one with an unknown field (read past it)
    assert "added_by_a_later_release" in caplog.text and garbled.task_id in caplog.text
    assert stack.queued_ids() == {newer.task_id, *(r.task_id for r in normal)}
    assert garbled.task_id not in await runtime.store.list_due(now + 10_000, limit=100)  # out of the index
    read = await stack.record(newer.task_id)
    assert read is not None and read.status == "working" and read.task_id == newer.task_id

    later = _due("later", time.time(), time.time() - 1)  # the next run is not blocked
    await runtime.store.create(later)
    again = await runtime.sweep()
    assert again["requeued"] == 1 and again["unsweepable"] == 0 and again["errors"] == 0
    assert stack.queued_ids() == {later.task_id}


async def test_a_storage_error_leaves_the_task_due_for_the_next_sweep(stack: Stack) -> None:
    """Only what is not a storage fault takes a task out of the index: a failed read is tried again."""
    runtime, now = stack.runtime, time.time()
    task = _due("flaky", now, now - 10)
    await runtime.store.create(task)
    stack.ddb.arm("dynamodb.GetItem", "server error", ATTEMPTS, containing=task.task_id)
    counts = await runtime.sweep()
    assert counts["errors"] == 1 and counts["unsweepable"] == 0 and counts["requeued"] == 0
    assert task.task_id in await runtime.store.list_due(now + 10_000, limit=100)
    assert (await runtime.sweep())["requeued"] == 1 and stack.queued_ids() == {task.task_id}


# -- the sweeper counts the never-claimed tasks it queues again ---------------------------------------------
async def test_the_sweeper_counts_the_never_claimed_tasks_it_queues_again(stack: Stack) -> None:
    runtime, now = stack.runtime, time.time()
    lost = _due("lost", now, now - 10)  # created, its message lost: no worker ever claimed it
    crashed = _due("crashed", now, now - 10, attempts=1, lease_owner="gone", lease_expires_at=now - 10)
    for record in (lost, crashed):
        await runtime.store.create(record)
    with invocation("sweep") as swept:
        counts = await runtime.sweep()
    assert counts["requeued"] == 2 and counts["unclaimed"] == 1
    assert [m.name for m in swept.metrics].count("TasksSweptUnclaimed") == 1
    assert stack.queued_ids() == {lost.task_id, crashed.task_id}


# -- finding 6: a dropped progress notification and a re-run ------------------------------------------------
async def test_a_dropped_progress_notification_is_logged_by_the_re_run_and_none_repeats(running: Stack) -> None:
    client = MCPTestClient(running.kit)
    try:
        await client.initialize("2025-11-25", {"elicitation": {}})
        label = secrets.token_hex(4)
        # the second notification's write fails on every attempt: the first run drops it
        running.ddb.arm("dynamodb.PutItem", "server error", ATTEMPTS, containing=f"{label}-step2")
        call = {"name": "stepped", "arguments": {"label": label}, "task": {}, "_meta": {"progressToken": "p"}}
        task_id = (await client.legacy("tools/call", call)).result["task"]["taskId"]

        await until(lambda: _status(running, task_id, "input_required"), what="the first run to ask its question")
        assert running.ddb.injected["dynamodb.PutItem:server error"] == ATTEMPTS
        answer = {"action": "accept", "content": {"ok": True}}
        reply = {"jsonrpc": "2.0", "id": TaskInputId(task_id, "go").format(), "result": answer}
        assert (await client.send("POST", json.dumps(reply), client.legacy_headers())).status == 202
        final = await running.settled(task_id)
        assert final.status == "completed" and runs[label] == 2  # the answer re-ran it from the top

        result = await client.legacy("tasks/result", {"taskId": task_id})
        progress = [m["params"] for m in result.messages if m.get("method") == "notifications/progress"]
        assert [p["progress"] for p in progress] == [1, 2, 3, 4]  # was 1, 3, 3, 4
        assert [p["message"] for p in progress] == [f"{label}-step{n}" for n in (1, 2, 3, 4)]
        assert result.body["result"]["content"][0]["text"] == f"{label} done"
        logged = running.event_items(task_id)
        assert [json.loads(i["message"]["S"])["params"]["progress"] for i in logged] == [1, 2, 3, 4]
    finally:
        await client.close()


async def test_a_re_run_never_logs_a_notification_twice_even_when_its_first_write_was_answered_500(
    running: Stack,
) -> None:
    """An ordinal written, then answered 500: the retry meets it, and so does the re-run; both are no-ops."""
    client = MCPTestClient(running.kit)
    try:
        await client.initialize("2025-11-25", {"elicitation": {}})
        label = secrets.token_hex(4)
        running.ddb.arm("dynamodb.PutItem", "written, then 500", containing=f"{label}-step3")
        call = {"name": "stepped", "arguments": {"label": label}, "task": {}, "_meta": {"progressToken": "p"}}
        task_id = (await client.legacy("tools/call", call)).result["task"]["taskId"]
        await until(lambda: _status(running, task_id, "input_required"), what="the question")
        reply = {
            "jsonrpc": "2.0",
            "id": TaskInputId(task_id, "go").format(),
            "result": {"action": "accept", "content": {"ok": True}},
        }
        assert (await client.send("POST", json.dumps(reply), client.legacy_headers())).status == 202
        assert (await running.settled(task_id)).status == "completed"
        assert running.ddb.injected["dynamodb.PutItem:written, then 500"] == 1
        result = await client.legacy("tasks/result", {"taskId": task_id})
        progress = [m["params"]["progress"] for m in result.messages if m.get("method") == "notifications/progress"]
        assert progress == [1, 2, 3, 4]
        assert len(running.event_items(task_id)) == 4
    finally:
        await client.close()


async def _status(stack: Stack, task_id: str, status: str) -> bool:
    record = await stack.record(task_id)
    return record is not None and record.status == status
