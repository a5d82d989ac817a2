"""What a task run is to the runtime: the executor that starts runs somewhere, what one run gets (`TaskRun`),
the function that performs one (dispatch provides it) and how a run ended."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol

from ..protocol.values import Struct, Value, set_field
from ..server.steps import Checkpoints
from .model import TaskRecord


class Executor(Protocol):
    async def submit(self, task_id: str) -> None:
        """Arrange for the task to run (now, or on a worker). Raises if that cannot be arranged."""

    async def submit_later(self, task_id: str, delay: float) -> None:
        """Arrange for the task to run again in `delay` seconds (a sleeping task), best effort: the sweeper
        queues a task that is due and asleep too (its due time is its wake-up time)."""

    def cancel(self, task_id: str) -> None:
        """Best effort: stop a run in progress on this machine (the durable status is what counts)."""


class Submitted(Value):
    """What became of the tasks `submit_all` was given, each in one list: `sent` (SQS took the message),
    `failed` (refused: not sent) and `ambiguous` (the request raised, past its client's retries, so the
    message may have been delivered anyway: a send can land and answer 500)."""

    __slots__ = ("sent", "failed", "ambiguous")
    sent: list[str]
    failed: list[str]
    ambiguous: list[str]

    def __init__(
        self,
        sent: list[str] | None = None,
        failed: list[str] | None = None,
        ambiguous: list[str] | None = None,
    ) -> None:
        set_field(self, "sent", [] if sent is None else sent)
        set_field(self, "failed", [] if failed is None else failed)
        set_field(self, "ambiguous", [] if ambiguous is None else ambiguous)


async def submit_all(executor: Executor, task_ids: list[str]) -> Submitted:
    """Submit several tasks: in batches where the executor sends them so (`submit_many`, the SQS one),
    else one by one (a `submit` that raised is ambiguous). Never raises for them."""
    many = getattr(executor, "submit_many", None)
    if many is not None:
        submitted: Submitted = await many(task_ids)
        return submitted
    done = Submitted()
    for task_id in task_ids:
        try:
            await executor.submit(task_id)
        except Exception:
            done.ambiguous.append(task_id)
        else:
            done.sent.append(task_id)
    return done


OutcomeKind = Literal["completed", "failed", "input_required", "cancelled", "sleeping"]


class Outcome(Struct):
    """How a run of the tool ended."""

    __slots__ = ("kind", "result", "error", "input_requests", "wake_at")
    kind: OutcomeKind
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    input_requests: dict[str, dict[str, Any]] | None
    wake_at: float
    """`sleeping`: when the task runs again (`ctx.sleep` ended the run)."""

    def __init__(
        self,
        kind: OutcomeKind,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        input_requests: dict[str, dict[str, Any]] | None = None,
        wake_at: float = 0.0,
    ) -> None:
        self.kind = kind
        self.result = result
        self.error = error
        self.input_requests = input_requests
        self.wake_at = wake_at


Notify = Callable[[dict[str, Any]], Awaitable[None]]


class TaskRun(Value):
    """What one run of a task gets besides its record, from the backend that runs it: a cancellation check,
    where its notifications go (tasks/notify.py), and where its steps and sleeps are kept (`Checkpoints`:
    the task store on the SQS and in-process backends, tasks/steps.py). `TaskRuntime.task_run` builds it."""

    __slots__ = ("is_cancelled", "notify", "checkpoints")
    is_cancelled: Callable[[], bool]
    notify: Notify
    checkpoints: Checkpoints

    def __init__(self, is_cancelled: Callable[[], bool], notify: Notify, checkpoints: Checkpoints) -> None:
        set_field(self, "is_cancelled", is_cancelled)
        set_field(self, "notify", notify)
        set_field(self, "checkpoints", checkpoints)


Execute = Callable[[TaskRecord, TaskRun], Awaitable[Outcome]]
"""Runs a task's request once (dispatch provides it): the record, and what the run gets."""


class SubmitFailed(Exception):
    """A new task was written but could not be handed to its executor (the queue is down after its
    client's retries); it has been marked `failed`, and the client may create it again later."""
