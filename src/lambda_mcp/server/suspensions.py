"""The kit's control-flow signals: how a run of user code (or a wait) ends early, and what it carries.

They derive from `BaseException`, as `asyncio.CancelledError` does, so a handler's `except Exception:`
around `ctx.elicit(...)` cannot swallow them. None is a kind of another: each is caught by name.

- `InputRequired` (`ctx.ask` on the 2026 wire or in a task's run): answers for `requests` are missing.
  The runner makes it an `InputRequiredResult`; the task runtime parks the task in `input_required`.
- `CallSuspended` (`ctx.ask`, `ctx.close_sse_stream` of a legacy call on a buffered transport): the call
  goes on in a later invocation; the buffered transport records it and re-runs it when the client resumes.
- `StartTask`, `TaskStarted` (`ctx.start_task()`): the rest of the run is a task's (the dispatcher makes one).
- `CancelledByClient` (`ctx.check_cancelled()`): the client cancelled the request.
- `Sleeping` (`ctx.sleep` in a task's run, on a backend that re-runs the tool): the run ends, and the task
  runs again when the sleep is over. `StepInterrupted` (`ctx.step` in a task's run): an earlier run
  started the step and never finished it; a step runs at most once, so the task fails.
- `WaitInterrupted` (a legacy `tasks/result` wait at its deadline): the buffered transport ends the
  response and the wait goes on when the client resumes.
"""

from __future__ import annotations

from typing import Any


class Suspension(BaseException):  # noqa: N818 (a control-flow signal, like asyncio.CancelledError)
    """Control flow of the kit through a handler (it must reach the kit even through `except Exception:`)."""


class InputRequired(Suspension):
    """The handler needs client answers for `requests` (key -> `{method, params}`) it has none for yet."""

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        super().__init__("input required")
        self.requests = requests


class CallSuspended(Suspension):
    """A legacy call on a buffered transport cannot go on in this invocation: it sent requests to the
    client (`awaiting` their keys) or closed its stream. The transport records how far it got, ends the
    response, and re-runs the call from the top when the client resumes."""

    def __init__(self, awaiting: tuple[str, ...], checkpoints: int) -> None:
        super().__init__("call suspended")
        self.awaiting = awaiting
        """The input keys asked for in this run and not answered yet (empty: it closed its stream)."""
        self.checkpoints = checkpoints
        """Stream closes this run passed, the one it stopped at included."""


class StartTask(Suspension):
    """`ctx.start_task()` on the inline run of a deferred task tool: the call becomes a task here."""


class TaskStarted(StartTask):
    """`StartTask` with the answers the inline run collected so far (the task's run replays them)."""

    def __init__(self, answers: dict[str, Any]) -> None:
        super().__init__("task started")
        self.answers = answers


class Sleeping(Suspension):
    """The run of a task ends at `ctx.sleep`: the task runs again at `until` (epoch seconds)."""

    def __init__(self, until: float) -> None:
        super().__init__("sleeping")
        self.until = until


class StepInterrupted(Suspension):
    """An earlier run of the task started the step `name` and stopped before it finished (its worker was
    killed, timed out, or lost the write of its result): the step may have had its effects, and it runs
    at most once, so the task fails rather than run it again."""

    def __init__(self, name: str) -> None:
        super().__init__(f"step {name!r} was interrupted")
        self.name = name


class CancelledByClient(Suspension):
    """Raised by `Context.check_cancelled()` once the client cancelled the request."""


class WaitInterrupted(Suspension):
    """A blocking wait (legacy `tasks/result`) reached its deadline: the transport ends the response so
    the client can resume it (an SSE `retry:` and a `GET` with `Last-Event-ID`)."""
