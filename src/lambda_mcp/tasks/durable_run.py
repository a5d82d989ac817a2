"""A task's durable execution (the durable task worker, entrypoints/durable_worker.py): the tool's rounds as
durable operations, `ctx.step` as durable steps, `ctx.sleep` as durable waits and a question to the client
as a durable callback. Imports the durable execution SDK: only the durable worker loads this module.

The execution replays from the top at each invocation; what it did is recorded in operations:

- **Rounds.** Round n is a child context (`round-n`) that runs the tool from the top, with every answer in
  the task record, as the other backends do. Its result (how the tool ended) is recorded, so a replay
  passes finished rounds without running the tool. A round that asked the client is followed by a
  callback (`answers-n`), whose submitter parks the task (`input_required`, the callback id) in one write.
  The answers' write then completes the callback (tasks/durable.py): the execution goes on with round n+1.
- **Steps and sleeps.** The tool's own operations live in one namespace (`tool`), counted from 1 in every
  round: a tool that re-runs from the top finds step k at the same place, so its recorded result comes
  back and it never runs again. A step runs `AT_MOST_ONCE` without retries: one that was interrupted (its
  invocation crashed or timed out) fails the task rather than run twice. A sleep records its wake-up time
  (a step, so every replay sees the same), then waits: no compute until then.
- **The record stays the truth.** Each invocation that runs a round claims the task (its execution ARN,
  one more attempt; the kit's attempts rule fails a task whose invocations keep crashing); a cancelled or
  finished task ends the execution. Every write is conditional on the record's version.

The SDK is synchronous and suspends by raising `SuspendExecution` (a `BaseException`); the kit's tool runs
on its event loop. A durable operation is called from a worker thread, the step's function is run back on
the loop, and a suspension is held (`Suspended.signal`) while the kit ends the run as a sleep; the handler
raises it outside the loop. No durable operation is ever called inside a task group (where the signal
would be wrapped in an exception group and the execution left hanging).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

import anyio.from_thread
import anyio.to_thread
from aws_durable_execution_sdk_python import DurableContext, StepContext
from aws_durable_execution_sdk_python.config import (
    Duration,
    StepConfig,
    StepSemantics,
    WaitForCallbackConfig,
)
from aws_durable_execution_sdk_python.exceptions import (
    CallbackError,
    DurableOperationError,
    StepInterruptedError,
    SuspendExecution,
)
from aws_durable_execution_sdk_python.retries import RetryPresets

from ..runloop import run
from ..server.errors import ToolError
from ..server.steps import SKIPPED, spoken
from ..server.suspensions import Sleeping, StepInterrupted
from ..storage.errors import ConflictError
from .execution import Outcome
from .model import TaskRecord
from .runtime import TaskRuntime
from .sweeper import RELEASED, failure, gave_up
from .watch import run_watched
from .writes import saved

logger = logging.getLogger("lambda_mcp")
MAX_OPERATIONS = 3_000
"""Lambda's limit on the operations of one execution."""
MAX_BYTES = 100 * 1_048_576
"""Lambda's limit on the data one execution writes."""
RESERVED_OPERATIONS = 8
"""Operations kept back for the round's end, its callback and the finish."""
TOOL_NAMESPACE = "tool"
"""The operation-id prefix of the tool's own steps and waits (the rounds' own are the execution's)."""
ONCE = StepConfig(retry_strategy=RetryPresets.none(), step_semantics=StepSemantics.AT_MOST_ONCE_PER_RETRY)


def task_id_of(event: Any) -> str:
    task_id = event.get("taskId") if isinstance(event, dict) else None
    if not isinstance(task_id, str) or not task_id:
        raise ValueError("a durable task execution starts with {'taskId': ...}")
    return task_id


@dataclasses.dataclass
class Budget:
    """The operations and bytes of the execution, as the code path decides them (so the same on every
    replay): a tool that would pass Lambda's limits fails with a clear error rather than hang."""

    operations: int = 0
    bytes: int = 0

    def spend(self, operations: int, size: int = 0) -> None:
        if self.operations + operations > MAX_OPERATIONS - RESERVED_OPERATIONS:
            raise ToolError(
                f"this task would pass {MAX_OPERATIONS:,} durable operations, Lambda's limit per execution (each"
                " ctx.step is one, each ctx.sleep two, each question to the client four): do more in each step"
            )
        if self.bytes + size > MAX_BYTES:
            raise ToolError(
                "this task's step results would pass 100 MB, Lambda's limit per execution: store large content"
                " elsewhere (S3) and return its key"
            )
        self.operations += operations
        self.bytes += size


class Suspended:
    """Holds the `SuspendExecution` a durable operation raised in a worker thread, for the handler."""

    def __init__(self) -> None:
        self.signal: SuspendExecution | None = None


class DurableCheckpoints:
    """`Checkpoints` (server/steps.py) on a durable context: a step is a durable step, a sleep a durable wait."""

    def __init__(
        self,
        tool: DurableContext,
        suspended: Suspended,
        budget: Budget,
        clock: Callable[[], float],
        latest_wake: float,
        skip_waits: bool = False,
    ) -> None:
        self.skip_waits = skip_waits
        """Time skipping (`lambda-mcp dev`): the local runner ends waits at once; each is logged."""
        self.tool = tool
        self.suspended = suspended
        self.budget = budget
        self.clock = clock
        self.latest_wake = latest_wake

    async def _durably(self, operation: Callable[[], Any], until: float | None = None) -> Any:
        """Run a durable operation in a worker thread; a suspension ends the run as a sleep until `until`."""

        def call() -> tuple[bool, Any]:
            try:
                return True, operation()
            except SuspendExecution as signal:
                return False, signal

        finished, value = await anyio.to_thread.run_sync(call)
        if finished:
            return value
        self.suspended.signal = value
        raise Sleeping(self.clock() if until is None else until)

    async def step(self, name: str, run: Callable[[], Awaitable[Any]]) -> Any:
        self.budget.spend(1)
        raised: list[BaseException] = []

        async def author() -> Any:
            return await run()

        def body(_: StepContext) -> Any:
            try:
                return anyio.from_thread.run(author)
            except BaseException as exc:
                raised.append(exc)
                raise

        try:
            result = await self._durably(lambda: self.tool.step(body, name=name, config=ONCE))
        except Exception as failed:
            if _interrupted(failed):  # started by an invocation that stopped while it ran: never again
                raise StepInterrupted(name) from None
            if raised:  # the function's own exception, as on every backend (a replay gets the SDK's)
                raise raised[0] from None
            raise
        self.budget.spend(0, len(json.dumps(result, separators=(",", ":"))))
        return result

    async def sleep(self, name: str, seconds: float) -> None:
        self.budget.spend(2)
        now = self.clock()
        until = float(await self._durably(lambda: self.tool.step(lambda _: now + seconds, name=f"{name} until")))
        if until > self.latest_wake:
            raise ToolError(
                f"this task cannot sleep {spoken(seconds)}: it would wake {spoken(until - self.latest_wake)}"
                " too late to finish before the longest a task may live (LAMBDA_MCP_TASK_MAX_TTL_SECONDS)"
            )
        wait = Duration.from_seconds(max(1, math.ceil(until - self.clock())))
        try:
            await self._durably(lambda: self.tool.wait(wait, name=name), until)
        except Sleeping:
            if self.skip_waits:
                logger.warning(SKIPPED, spoken(seconds))
            raise


def _interrupted(failed: Exception) -> bool:
    """Whether a step failed as interrupted: at once, or (a replay) as its recorded failure, known by name."""
    if isinstance(failed, StepInterruptedError):
        return True
    if not isinstance(failed, DurableOperationError):
        return False
    kinds = (failed.error_type, getattr(failed.__cause__, "error_type", ""))
    return any(str(kind).endswith("StepInterruptedError") for kind in kinds)


def execute(runtime: TaskRuntime, event: Any, context: DurableContext) -> dict[str, Any]:
    """The durable execution of one task (see the module); what it returns is the execution's result."""
    task_id = task_id_of(event)
    budget = Budget()
    number = 0
    while True:
        number += 1
        budget.spend(1)
        ended: dict[str, Any] = context.run_in_child_context(
            lambda _: _round(runtime, task_id, context, budget), name=f"round-{number}"
        )
        if ended["kind"] != "input_required":
            return {"taskId": task_id, "status": ended["kind"]}
        budget.spend(3)
        left = ended["expires_at"] - runtime.clock()  # the callback times out with the task (read at a new one)
        callback = WaitForCallbackConfig(
            timeout=Duration.from_seconds(max(1, math.ceil(left))), retry_strategy=RetryPresets.none()
        )

        def park(callback_id: str, _: Any, requests: dict[str, Any] = ended["requests"]) -> None:
            run(_park(runtime, task_id, requests, callback_id))

        try:
            context.wait_for_callback(park, name=f"answers-{number}", config=callback)
        except CallbackError:  # timed out with the task (or failed): nothing will answer now
            run(_expire(runtime, task_id))
            return {"taskId": task_id, "status": "failed"}


def _round(runtime: TaskRuntime, task_id: str, context: DurableContext, budget: Budget) -> dict[str, Any]:
    """One round: the tool from the top (its operations in the tool namespace, counted from 1 again)."""
    suspended = Suspended()
    tool = context.create_child_context(TOOL_NAMESPACE, is_virtual=True)
    arn = context.execution_context.durable_execution_arn
    ended = run(_run_round(runtime, task_id, arn, tool, suspended, dataclasses.replace(budget)))
    if suspended.signal is not None:  # a wait (or a step) suspended: the invocation ends here
        raise suspended.signal
    return ended


async def _run_round(
    runtime: TaskRuntime, task_id: str, arn: str, tool: DurableContext, suspended: Suspended, budget: Budget
) -> dict[str, Any]:
    """Claim the task for this invocation (one more attempt), run the tool, and record how it ended, unless
    it ended as a question: the callback's submitter parks it."""
    record = await runtime.store.get(task_id, runtime.clock())
    while record is not None and record.status == "working":
        if record.attempts >= runtime.max_attempts:  # its invocations kept stopping mid-round (crashes, timeouts)
            settled = await runtime.settle(record, "failed", error=gave_up(record))
            return {"kind": settled.status}
        now = runtime.clock()
        claim = record.replace(
            execution_arn=arn,
            attempts=record.attempts + 1,
            updated_at=now,
            **{**RELEASED, "due_at": now + runtime.requeue_after_seconds},
        )
        try:
            record = await saved(runtime.store, runtime.clock, claim, f"claiming durable task {task_id}")
        except ConflictError:  # answered or cancelled meanwhile: read it again
            record = await runtime.store.get(task_id, runtime.clock())
            continue
        latest_wake = runtime.longest(record) - runtime.min_ttl_ms / 1000
        checkpoints = DurableCheckpoints(tool, suspended, budget, runtime.clock, latest_wake, runtime.skip_waits)
        return await _run_tool(runtime, record, checkpoints)
    return {"kind": record.status if record is not None else "expired"}


async def _run_tool(runtime: TaskRuntime, claimed: TaskRecord, checkpoints: DurableCheckpoints) -> dict[str, Any]:
    """The tool's run, with the watcher that stops it when the task is cancelled (tasks/watch.py)."""

    def start(is_cancelled: Callable[[], bool]) -> Awaitable[Outcome]:
        return runtime.execute(claimed, runtime.task_run(claimed, is_cancelled, checkpoints))

    outcome = await run_watched(runtime.store, claimed, start, runtime.clock)
    if outcome.kind == "input_required":  # parked by the callback's submitter, with the callback's id
        return {"kind": "input_required", "requests": outcome.input_requests or {}, "expires_at": claimed.expires_at}
    finished = await runtime.finish(claimed, outcome)
    return {"kind": finished.status if finished.terminal else outcome.kind}


async def _park(runtime: TaskRuntime, task_id: str, requests: dict[str, Any], callback_id: str) -> None:
    """The callback's submitter: the task waits for the client, its requests and the callback that resumes
    it in one write (the runtime's park), unless it was cancelled, or parked by an earlier try of this."""
    record = await runtime.store.get(task_id, runtime.clock())
    if record is not None and record.status == "working":
        await runtime.finish(record, Outcome("input_required", input_requests=requests), callback_id)


async def _expire(runtime: TaskRuntime, task_id: str) -> None:
    record = await runtime.store.get(task_id, runtime.clock())
    if record is not None and not record.terminal:
        await runtime.settle(record, "failed", error=failure("Task failed: no answer came before it expired"))
