"""The task store contract, the same on every adapter: durable create, the state machine enforced by
conditional writes (a final status never changes, a stale write loses), expiry, listing by owner."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lambda_mcp.storage import ConflictError
from lambda_mcp.storage.records import StepRecord, listed
from lambda_mcp.tasks import InvalidTransition, TaskRecord, TaskStore, new_task_id, transition

pytestmark = pytest.mark.anyio
NOW = 1_800_000_000.0


def _task(owner: str = "principal:alice", created: float = NOW, ttl: float = 600) -> TaskRecord:
    return TaskRecord(
        task_id=new_task_id(),
        owner=owner,
        method="tools/call",
        params={"name": "slow_compute", "arguments": {"seconds": 1}},
        created_at=created,
        updated_at=created,
        expires_at=created + ttl,
        ttl_ms=int(ttl * 1000),
        poll_interval_ms=500,
    )


async def test_a_created_task_reads_back_and_ids_are_unique(task_store: TaskStore) -> None:
    task = _task()
    await task_store.create(task)
    assert await task_store.get(task.task_id, NOW) == task
    with pytest.raises(ConflictError):
        await task_store.create(task)
    assert await task_store.get(new_task_id(), NOW) is None


async def test_the_state_machine_holds_across_writes(task_store: TaskStore) -> None:
    task = _task()
    await task_store.create(task)
    parked = await task_store.save(
        transition(task, "input_required", NOW + 1, input_requests={"confirm": {"method": "elicitation/create"}})
    )
    assert parked.version == 1 and parked.status == "input_required"
    answered = transition(parked, "input_required", NOW + 2, input_responses={"confirm": {"action": "accept"}})
    resumed = await task_store.save(transition(answered, "working", NOW + 2, input_requests={}))
    done = await task_store.save(transition(resumed, "completed", NOW + 3, result={"content": []}))
    stored = await task_store.get(task.task_id, NOW + 3)
    assert stored is not None and stored.status == "completed" and stored.result == {"content": []}
    assert stored.input_responses == {"confirm": {"action": "accept"}} and stored.version == done.version
    with pytest.raises(InvalidTransition):
        transition(stored, "working", NOW + 4)
    with pytest.raises(ConflictError):  # even a write that skips the state machine cannot touch a final task
        await task_store.save(stored.replace(status="working"))


async def test_a_stale_write_loses_so_cancel_and_completion_end_in_one_state(task_store: TaskStore) -> None:
    task = _task()
    await task_store.create(task)
    seen_by_worker = await task_store.get(task.task_id, NOW)
    seen_by_canceller = await task_store.get(task.task_id, NOW)
    assert seen_by_worker is not None and seen_by_canceller is not None
    await task_store.save(transition(seen_by_canceller, "cancelled", NOW + 1, cancel_requested=True))
    with pytest.raises(ConflictError):
        await task_store.save(transition(seen_by_worker, "completed", NOW + 2, result={"content": []}))
    final = await task_store.get(task.task_id, NOW + 2)
    assert final is not None and final.status == "cancelled" and final.result is None


async def test_expired_tasks_are_invisible(task_store: TaskStore) -> None:
    task = _task(ttl=60)
    await task_store.create(task)
    assert await task_store.get(task.task_id, NOW + 59) is not None
    assert await task_store.get(task.task_id, NOW + 61) is None
    listed, _ = await task_store.list_owned(task.owner, NOW + 61)
    assert listed == []


async def test_listing_pages_through_only_the_owners_tasks_in_creation_order(task_store: TaskStore) -> None:
    mine = [_task(created=NOW + i) for i in range(5)]
    theirs = [_task(owner="principal:bob", created=NOW + i) for i in range(2)]
    for task in [*theirs, *reversed(mine)]:
        await task_store.create(task)
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(10):
        page, cursor = await task_store.list_owned("principal:alice", NOW + 10, cursor, limit=2)
        seen += [t.task_id for t in page]
        if cursor is None:
            break
    assert seen == [t.task_id for t in mine]
    (first,), _ = await task_store.list_owned("principal:alice", NOW + 10, limit=1)
    assert first == listed(mine[0]) and first.params == {}  # a listing leaves the request out
    with pytest.raises(ValueError):
        await task_store.list_owned("principal:alice", NOW, "not-a-cursor")


async def test_only_overdue_working_tasks_are_due_and_leaving_working_leaves_the_index(task_store: TaskStore) -> None:
    overdue, later, parked = (_task(created=NOW + i) for i in range(3))
    for task, due in ((overdue, NOW + 5), (later, NOW + 50), (parked, NOW + 5)):
        task.due_at = due
        await task_store.create(task)
    stored = await task_store.get(parked.task_id, NOW)
    assert stored is not None
    await task_store.save(transition(stored, "input_required", NOW + 1, input_requests={"k": {}}))
    due = await task_store.list_due(NOW + 10)
    assert due == [overdue.task_id]
    stored = await task_store.get(overdue.task_id, NOW + 10)
    assert stored is not None
    await task_store.save(transition(stored, "completed", NOW + 11, result={"content": []}))
    assert await task_store.list_due(NOW + 10) == []
    assert await task_store.list_due(NOW + 60) == [later.task_id]


CLAIMS = {"iss": "https://issuer.example.com", "sub": "alice", "groups": ["staff", "admins"], "email_verified": True}


async def test_the_creators_claims_read_back_and_stay_out_of_the_listing(task_store: TaskStore) -> None:
    task = _task().replace(claims=CLAIMS)
    await task_store.create(task)
    stored = await task_store.get(task.task_id, NOW)
    assert stored is not None and stored.claims == CLAIMS
    (first,), _ = await task_store.list_owned(task.owner, NOW)
    assert first.task_id == task.task_id and first.claims == {}


@pytest.mark.parametrize("backend", ["moto", "dynamodb-local"], indirect=True)
async def test_a_task_written_before_claims_were_kept_still_reads(
    backend: tuple[str, Any], task_store: TaskStore
) -> None:
    """An item whose JSON has no `claims` (written by an earlier version) reads back with none."""
    from lambda_mcp.storage.dynamodb import keys

    client, table = backend[1]
    task = _task()
    await task_store.create(task)
    old = {name: value for name, value in task.as_dict().items() if name != "claims"}
    client.update_item(
        TableName=table,
        Key={keys.PK: {"S": keys.task_pk(task.task_id)}, keys.SK: {"S": keys.TASK_SK}},
        UpdateExpression="SET #body = :body, #listing = :body",
        ExpressionAttributeNames={"#body": "body", "#listing": "listing"},
        ExpressionAttributeValues={":body": {"S": json.dumps(old)}},
    )
    stored = await task_store.get(task.task_id, NOW)
    assert stored == task and stored.claims == {}
    (first,), _ = await task_store.list_owned(task.owner, NOW)
    assert first.task_id == task.task_id and first.claims == {}
    await task_store.save(transition(stored, "completed", NOW + 1, result={"content": []}))  # and it still saves


FAILED = {"code": -32603, "message": "could not be queued", "data": {"retryable": True}}


async def test_a_void_fails_only_an_untouched_task_and_stands_in_for_one_not_written(task_store: TaskStore) -> None:
    task = _task()
    await task_store.create(task)
    voided = await task_store.void(transition(task, "failed", NOW + 1, error=FAILED))
    assert voided.version == 1 and await task_store.get(task.task_id, NOW + 1) == voided
    with pytest.raises(ConflictError):  # it moved on (here: the void itself)
        await task_store.void(transition(task, "failed", NOW + 2, error=FAILED))
    claimed = _task()
    await task_store.create(claimed)
    await task_store.save(claimed.replace(lease_owner="w", lease_expires_at=NOW + 60))
    with pytest.raises(ConflictError):  # a worker took it: a void never overwrites that
        await task_store.void(transition(claimed, "failed", NOW + 2, error=FAILED))
    late = _task()  # its create has not landed (yet): the void stands in, and a late create fails
    await task_store.void(transition(late, "failed", NOW + 1, error=FAILED))
    with pytest.raises(ConflictError):
        await task_store.create(late)
    stored = await task_store.get(late.task_id, NOW + 1)
    assert stored is not None and stored.status == "failed" and stored.error == FAILED
    assert await task_store.list_due(NOW + 1000) == []


async def test_a_retry_key_binds_once_in_its_window_and_is_taken_over_only_from_its_task(task_store: TaskStore) -> None:
    await task_store.bind_retry_key("k1", "t1", NOW, NOW + 120)
    assert await task_store.retry_key_task("k1", NOW + 1) == "t1"
    assert await task_store.retry_key_task("k2", NOW + 1) is None
    with pytest.raises(ConflictError):  # bound
        await task_store.bind_retry_key("k1", "t2", NOW + 1, NOW + 121)
    with pytest.raises(ConflictError):  # bound to another task than the one it would replace
        await task_store.bind_retry_key("k1", "t2", NOW + 1, NOW + 121, replacing="t0")
    await task_store.bind_retry_key("k1", "t2", NOW + 1, NOW + 121, replacing="t1")
    assert await task_store.retry_key_task("k1", NOW + 2) == "t2"
    assert await task_store.retry_key_task("k1", NOW + 121) is None  # past its window
    await task_store.bind_retry_key("k1", "t3", NOW + 121, NOW + 241)  # an expired binding is free
    assert await task_store.retry_key_task("k1", NOW + 122) == "t3"


# -- a task's checkpoints (`ctx.step`, `ctx.sleep`): items of their own beside the task -------------------
async def test_a_tasks_checkpoints_are_recorded_once_beside_the_task(task_store: TaskStore) -> None:
    task = _task()
    await task_store.create(task)
    assert await task_store.steps(task.task_id, NOW) == {}
    await task_store.start_step(task.task_id, "step:A", "run-1", NOW + 600)
    with pytest.raises(ConflictError):  # recorded (started): another run must not start it again
        await task_store.start_step(task.task_id, "step:A", "run-2", NOW + 600)
    assert await task_store.steps(task.task_id, NOW) == {"step:A": StepRecord("step:A", False, None, "run-1")}
    result = {"rows": [1, "x", 2.5], "none": None, "ok": True}
    await task_store.finish_step(task.task_id, "step:A", "run-1", result, NOW + 600)
    with pytest.raises(ConflictError):  # a result is never replaced
        await task_store.finish_step(task.task_id, "step:A", "run-2", "other", NOW + 600)
    await task_store.drop_step(task.task_id, "step:A", "run-1")  # finished: not forgotten
    await task_store.finish_step(task.task_id, "sleep:sleep", "run-1", {"until": NOW + 7200.5}, NOW + 600)
    assert await task_store.steps(task.task_id, NOW) == {
        "step:A": StepRecord("step:A", True, result, "run-1"),
        "sleep:sleep": StepRecord("sleep:sleep", True, {"until": NOW + 7200.5}, "run-1"),
    }
    assert await task_store.get(task.task_id, NOW) == task  # beside the task: it reads back as it was
    listed, _ = await task_store.list_owned(task.owner, NOW)
    assert [t.task_id for t in listed] == [task.task_id] and await task_store.list_due(NOW + 10_000) == []
    assert not await task_store.stopped(task.task_id, NOW)
    assert await task_store.steps(new_task_id(), NOW) == {}


async def test_a_started_step_is_forgotten_only_by_its_own_run_and_checkpoints_expire(task_store: TaskStore) -> None:
    task = _task()
    await task_store.create(task)
    await task_store.start_step(task.task_id, "step:B", "run-1", NOW + 60)
    await task_store.drop_step(task.task_id, "step:B", "run-2")  # not its mark: a no-op
    assert list(await task_store.steps(task.task_id, NOW)) == ["step:B"]
    await task_store.drop_step(task.task_id, "step:B", "run-1")
    assert await task_store.steps(task.task_id, NOW) == {}
    await task_store.drop_step(task.task_id, "step:B", "run-1")  # gone: a no-op
    await task_store.start_step(task.task_id, "step:B", "run-3", NOW + 60)  # forgotten: a later run starts it
    await task_store.finish_step(task.task_id, "step:B", "run-3", 42, NOW + 60)
    assert await task_store.steps(task.task_id, NOW + 59) == {"step:B": StepRecord("step:B", True, 42, "run-3")}
    assert await task_store.steps(task.task_id, NOW + 61) == {}  # expired (TTL deletes it late, or never)
