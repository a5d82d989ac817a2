"""`ctx.step` and `ctx.sleep` without a wire: the rules every backend shares (server/steps.py), the task
store's checkpoints (tasks/steps.py), the notification keys that survive them (tasks/notify.py), a sleeping
task in the runtime and the sweeper, and the executors' delayed wake-ups."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from lambda_mcp import Context, MCPApp, ToolError
from lambda_mcp.local.queue import InMemoryQueue
from lambda_mcp.server.steps import InlineCheckpoints, Steps, spoken
from lambda_mcp.server.suspensions import Sleeping, StepInterrupted
from lambda_mcp.storage import InMemoryEventLog
from lambda_mcp.storage.errors import StorageUnavailable
from lambda_mcp.tasks import InMemoryTaskStore, TaskRecord
from lambda_mcp.tasks.execution import Outcome, TaskRun
from lambda_mcp.tasks.inprocess import InProcessExecutor
from lambda_mcp.tasks.notify import SCOPE, ScopedCheckpoints, TaskNotifier
from lambda_mcp.tasks.runtime import TaskRuntime
from lambda_mcp.tasks.sqs import SqsExecutor
from lambda_mcp.tasks.steps import StoredCheckpoints
from lambda_mcp.testing import Client

pytestmark = pytest.mark.anyio
NOW = 1_800_000_000.0


class Direct:
    """Checkpoints that record nothing and log what they are asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str, float]] = []

    async def step(self, name: str, run: Callable[[], Awaitable[Any]]) -> Any:
        self.asked.append(("step", name, 0))
        return await run()

    async def sleep(self, name: str, seconds: float) -> None:
        self.asked.append(("sleep", name, seconds))


# -- the rules every backend shares ---------------------------------------------------------------------
async def test_a_step_name_used_twice_in_a_run_is_a_value_error_naming_it() -> None:
    steps = Steps(Direct())
    assert await steps.step("fetch", lambda: 1, ()) == 1
    with pytest.raises(ValueError, match="'fetch' is used twice"):
        await steps.step("fetch", lambda: 2, ())
    for bad in ("", "x" * 201, 7):
        with pytest.raises(ValueError, match="a step's name"):
            await steps.step(bad, lambda: 1, ())  # type: ignore[arg-type]


async def test_a_result_that_is_not_json_is_a_type_error_naming_the_step() -> None:
    with pytest.raises(TypeError, match="the step 'when' returned a set that is not JSON"):
        await Steps(Direct()).step("when", lambda: {1, 2}, ())
    with pytest.raises(TypeError, match="'nan'"):
        await Steps(Direct()).step("nan", lambda: float("nan"), ())


async def test_a_steps_function_is_sync_or_async_takes_its_arguments_and_its_result_is_json() -> None:
    async def later(a: int, b: int) -> tuple[int, int]:
        return (a, b)

    steps = Steps(Direct(), in_thread=True)
    assert await steps.step("sync", lambda a, b: {"pair": (a, b)}, (1, 2)) == {"pair": [1, 2]}
    assert await steps.step("async", later, (3, 4)) == [3, 4]


async def test_steps_run_one_at_a_time_and_a_step_cannot_run_a_step_sleep_or_ask() -> None:
    steps = Steps(Direct())

    async def nested() -> None:
        await steps.step("inner", lambda: 1, ())

    with pytest.raises(RuntimeError, match="ctx.step\\('inner'\\) while the step 'outer' runs"):
        await steps.step("outer", nested, ())

    async def sleeps() -> None:
        await steps.sleep(5, None)

    with pytest.raises(RuntimeError, match="ctx.sleep\\(\\) while the step 'napping' runs"):
        await steps.step("napping", sleeps, ())

    async def slow() -> int:
        await asyncio.sleep(0.05)
        return 1

    with pytest.raises(RuntimeError, match="while the step 'first' runs"):
        await asyncio.gather(steps.step("first", slow, ()), steps.step("second", slow, ()))


async def test_a_step_cannot_ask_the_client() -> None:
    app = MCPApp("asking")

    @app.tool
    async def asks_in_a_step(ctx: Context) -> str:
        async def confirm() -> Any:
            return await ctx.elicit("Sure?", bool)

        return str(await ctx.step("confirm", confirm))

    async with Client(
        app, elicitation_handler=lambda message, schema: {"value": True}, raise_exceptions=True
    ) as client:
        with pytest.raises(RuntimeError, match="asking the client while the step 'confirm' runs"):
            await client.call_tool("asks_in_a_step")


async def test_sleeps_take_a_finite_number_of_seconds_and_unnamed_ones_are_numbered_in_run_order() -> None:
    direct = Direct()
    steps = Steps(direct)
    for bad in (-1, float("inf"), float("nan"), True, "5"):
        with pytest.raises(ValueError, match="finite number of seconds"):
            await steps.sleep(bad, None)  # type: ignore[arg-type]
    await steps.sleep(5, None)
    await steps.sleep(0, None)  # nothing to wait for, nothing recorded; it keeps its number
    await steps.sleep(1.5, "approval")
    await steps.sleep(2, None)
    with pytest.raises(ValueError, match="'approval' is used twice"):
        await steps.sleep(2, "approval")
    assert direct.asked == [("sleep", "sleep", 5.0), ("sleep", "approval", 1.5), ("sleep", "sleep#3", 2.0)]


async def test_outside_a_task_a_sleep_sleeps_in_the_request_within_its_deadline(
    caplog: pytest.LogCaptureFixture,
) -> None:
    started = time.monotonic()
    await InlineCheckpoints(time.time() + 5).sleep("sleep", 0.2)
    assert time.monotonic() - started >= 0.19
    with pytest.raises(ToolError, match="cannot wait 2 h within this request.*runs as a task"):
        await InlineCheckpoints(time.time() + 25).sleep("sleep", 7200)
    with caplog.at_level(logging.WARNING, logger="lambda_mcp"):
        started = time.monotonic()
        await InlineCheckpoints(time.time() + 25, skip_waits=True).sleep("sleep", 7200)
        assert time.monotonic() - started < 1
    assert "skipping a wait of 2 h (lambda-mcp dev; --real-waits keeps it)" in caplog.text


def test_durations_are_spoken_as_people_say_them() -> None:
    assert [spoken(s) for s in (0.5, 45, 125, 7200, 93_784)] == ["0.5 s", "45 s", "2 min 5 s", "2 h", "1 d 2 h"]


# -- the task store's checkpoints ------------------------------------------------------------------------
def _stored(store: InMemoryTaskStore, clock: list[float], *, skip: bool = False) -> StoredCheckpoints:
    record = TaskRecord("t1", "anonymous", "tools/call", {}, NOW, NOW + 3600, 3_600_000, 500)
    return StoredCheckpoints(
        store, record, lambda: clock[0], keep_until=NOW + 86_400, latest_wake=NOW + 80_000, skip_waits=skip
    )


async def test_a_recorded_step_is_given_back_and_one_that_raised_runs_again() -> None:
    store, clock, calls = InMemoryTaskStore(), [NOW], []

    async def work() -> Any:
        calls.append(1)
        return {"n": len(calls)}

    async def broken() -> Any:
        calls.append(1)
        raise ConnectionError("the service is down")

    first = _stored(store, clock)
    assert await first.step("A", work) == {"n": 1}
    with pytest.raises(ConnectionError):
        await first.step("B", broken)
    again = _stored(store, clock)  # the next run
    assert await again.step("A", work) == {"n": 1} and len(calls) == 2  # given back, not called
    assert await again.step("B", work) == {"n": 3}  # it raised: nothing was recorded, so it runs
    assert set(await store.steps("t1", NOW)) == {"step:A", "step:B"}


async def test_a_step_started_and_never_finished_fails_the_run_instead_of_running_twice() -> None:
    store, clock = InMemoryTaskStore(), [NOW]
    await store.start_step("t1", "step:charge", "a-run-that-died", NOW + 3600)
    calls: list[int] = []

    async def charge() -> int:
        calls.append(1)
        return 1

    with pytest.raises(StepInterrupted) as interrupted:
        await _stored(store, clock).step("charge", charge)
    assert interrupted.value.name == "charge" and calls == []


async def test_a_result_too_large_to_record_is_a_clear_error_and_leaves_nothing() -> None:
    store, clock = InMemoryTaskStore(), [NOW]

    async def huge() -> str:
        return "x" * 400_000

    with pytest.raises(ValueError, match="the result of step 'big' is 400002 bytes.*at most 350000"):
        await _stored(store, clock).step("big", huge)
    assert await store.steps("t1", NOW) == {}


async def test_a_result_write_whose_answer_was_lost_is_recognised_as_its_own() -> None:
    class LostAnswers(InMemoryTaskStore):
        async def finish_step(self, task_id: str, name: str, run: str, result: Any, expires_at: float) -> None:
            await super().finish_step(task_id, name, run, result, expires_at)
            raise StorageUnavailable("DynamoDB 500 after it wrote")

    store, clock = LostAnswers(), [NOW]

    async def work() -> int:
        return 7

    assert await _stored(store, clock).step("A", work) == 7


async def test_a_sleep_ends_the_run_until_its_time_and_then_returns_at_once() -> None:
    store, clock = InMemoryTaskStore(), [NOW]
    with pytest.raises(Sleeping) as first:
        await _stored(store, clock).sleep("sleep", 7200)
    assert first.value.until == NOW + 7200
    clock[0] = NOW + 60  # woken early: it sleeps on, until the same time
    with pytest.raises(Sleeping) as early:
        await _stored(store, clock).sleep("sleep", 7200)
    assert early.value.until == NOW + 7200
    clock[0] = NOW + 7200
    await _stored(store, clock).sleep("sleep", 7200)  # over: the run goes on


async def test_a_sleep_past_the_longest_life_of_a_task_is_refused_and_time_skipping_wakes_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store, clock = InMemoryTaskStore(), [NOW]
    with pytest.raises(ToolError, match="cannot sleep 1 d.*LAMBDA_MCP_TASK_MAX_TTL_SECONDS"):
        await _stored(store, clock).sleep("sleep", 86_400)
    with caplog.at_level(logging.WARNING, logger="lambda_mcp"), pytest.raises(Sleeping) as skipped:
        await _stored(store, clock, skip=True).sleep("sleep", 7200)
    assert skipped.value.until == NOW  # the task runs again at once, through the same path
    assert "task t1: skipping a wait of 2 h (lambda-mcp dev; --real-waits keeps it)" in caplog.text
    await _stored(store, clock, skip=True).sleep("sleep", 7200)  # the re-run passes it


# -- notification keys that survive recorded steps ----------------------------------------------------------
async def test_each_step_sends_in_a_scope_of_its_own_so_a_recorded_step_shifts_nothing() -> None:
    events, store, clock = InMemoryEventLog(), InMemoryTaskStore(), [NOW]
    record = TaskRecord("t1", "session:s1", "tools/call", {}, NOW, NOW + 3600, 3_600_000, 500, wire="legacy")
    record.session_id = "s1"

    async def one_run() -> None:
        notify = TaskNotifier(events, record)
        checkpoints = ScopedCheckpoints(_stored(store, clock), notify)

        async def a() -> str:
            await notify({"m": "in A"})
            return "a"

        await notify({"m": "start"})
        await checkpoints.step("A", a)
        await notify({"m": "after A"})

    await one_run()
    await one_run()  # A is recorded: it sends nothing, and "after A" keeps its key
    logged = await events.read("s1", "task-t1")
    assert [(e.seq, e.message) for e in logged] == [
        (1, {"m": "start"}),
        (SCOPE + 1, {"m": "in A"}),
        (2 * SCOPE + 1, {"m": "after A"}),
    ]
    modern = TaskRecord("t2", "anonymous", "tools/call", {}, NOW, NOW + 3600, 3_600_000, 500, session_id="s1")
    await TaskNotifier(events, modern)({"m": "dropped"})  # 2026 tasks have no channel for it
    assert await events.read("s1", "task-t2") == []


# -- a sleeping task in the runtime and the sweeper ---------------------------------------------------------
class Woken:
    def __init__(self) -> None:
        self.submitted: list[str] = []
        self.later: list[tuple[str, float]] = []

    async def submit(self, task_id: str) -> None:
        self.submitted.append(task_id)

    async def submit_later(self, task_id: str, delay: float) -> None:
        self.later.append((task_id, delay))

    def cancel(self, task_id: str) -> None:
        return None


async def test_a_sleeping_run_leaves_the_task_working_released_due_at_its_wake_up_and_living_to_finish() -> None:
    clock = [NOW]

    async def sleeps(record: TaskRecord, run: TaskRun) -> Outcome:
        return Outcome("sleeping", wake_at=NOW + 7200)

    woken = Woken()
    runtime = TaskRuntime(InMemoryTaskStore(), woken, sleeps, clock=lambda: clock[0])
    task = await runtime.create(
        owner="anonymous", method="tools/call", params={}, wire="modern", protocol_version="x", client_capabilities={}
    )
    assert await runtime.work(task.task_id, "w", lease_seconds=30) == "asleep"
    asleep = await runtime.store.get(task.task_id, NOW)
    assert asleep is not None and asleep.status == "working" and asleep.lease_owner is None
    assert (asleep.wake_at, asleep.due_at, asleep.attempts) == (NOW + 7200, NOW + 7200, 0)
    assert asleep.expires_at == NOW + 7200 + runtime.min_ttl_ms / 1000 > task.expires_at
    assert asleep.ttl_ms == round((asleep.expires_at - NOW) * 1000)
    assert woken.later == [(task.task_id, 7200.0)]
    assert await runtime.work(task.task_id, "w", lease_seconds=30) == "skipped: asleep"  # an early message
    assert (await runtime.sweep())["requeued"] == 0
    clock[0] = NOW + 7200
    counts = await runtime.sweep()
    assert counts["requeued"] == 1 and counts["unclaimed"] == 0  # woken, not a lost message
    awake = await runtime.store.get(task.task_id, clock[0])
    assert awake is not None and awake.wake_at == 0


# -- the executors' delayed wake-ups -------------------------------------------------------------------------
async def test_sqs_delays_a_wake_up_of_up_to_15_minutes_and_leaves_a_later_one_to_the_sweeper() -> None:
    class Sqs:
        sent: list[dict[str, Any]] = []

        def send_message(self, **message: Any) -> dict[str, Any]:
            self.sent.append(message)
            return {}

    client = Sqs()
    executor = SqsExecutor("https://sqs/q", client)
    await executor.submit_later("t1", 29.2)
    await executor.submit_later("t2", 0)
    await executor.submit_later("t3", 899.5)
    await executor.submit_later("t4", 7200)
    assert [(m["MessageBody"], m.get("DelaySeconds")) for m in client.sent] == [
        ('{"taskId":"t1"}', 31),
        ('{"taskId":"t2"}', None),
    ]


async def test_the_in_process_executor_wakes_a_task_on_a_timer_that_a_cancel_stops() -> None:
    ran: list[str] = []

    async def run(task_id: str) -> None:
        ran.append(task_id)

    executor = InProcessExecutor(run)
    await executor.submit_later("t1", 0.05)
    await executor.submit_later("t2", 0.05)
    executor.cancel("t2")
    await asyncio.sleep(0.02)
    assert ran == []
    await asyncio.sleep(0.1)
    assert ran == ["t1"]
    await executor.submit_later("t3", 10)
    await executor.close()  # its timers go too


def test_the_local_queue_keeps_a_delayed_message_invisible_until_its_delay_is_over() -> None:
    queue = InMemoryQueue("local://q")
    queue.send_message(QueueUrl="local://q", MessageBody="later", DelaySeconds=1)
    queue.send_message(QueueUrl="local://q", MessageBody="now")
    assert [m["Body"] for m in queue.receive_message(QueueUrl="local://q", MaxNumberOfMessages=10)["Messages"]] == [
        "now"
    ]
    assert queue.receive_message(QueueUrl="local://q", WaitTimeSeconds=2)["Messages"][0]["Body"] == "later"
