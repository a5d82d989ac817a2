"""Checkpointed steps and sleeps (`ctx.step`, `ctx.sleep`): the rules every backend shares, and the port a
backend implements to keep them.

A tool that runs as a task re-runs from the top after each answer, crash or redelivery. `ctx.step(name, fn,
*args)` makes `fn` run once per task: its result (JSON) is recorded under `name`, and a re-run gets the
recorded result back without calling `fn`. `ctx.sleep(seconds)` makes the task wait without holding
compute. Where and how they are recorded is the backend's (`Checkpoints`):

- outside a task (a plain call): `InlineCheckpoints`, here: a step calls its function (nothing is recorded:
  an MRTR round or a resumed legacy call runs it again), and a sleep sleeps in the request, which must end
  before the request's deadline;
- a task on the SQS worker or the in-process executor: `tasks/steps.py`, in the task store;
- a task on Lambda durable functions: a durable step and a durable wait.

`Steps` holds what is the same everywhere: names unique in a run (sleeps without a name are numbered in
the order of the run: `sleep`, `sleep#2`, ...), one step at a time and never inside another, no client
input, sleep or step inside a step, and a step's result as JSON gives it back (on the first run too, so
that a re-run sees the same value).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio.to_thread

from .errors import ToolError

logger = logging.getLogger("lambda_mcp")
MAX_NAME = 200
"""Longest step or sleep name (it is part of a storage key)."""
SKIPPED = "skipping a wait of %s (lambda-mcp dev; --real-waits keeps it)"
"""What time skipping logs, for each wait it skips."""


class Checkpoints(Protocol):
    """How a backend keeps one run's steps and sleeps. `Context` calls these with names already checked
    (unique in the run, one step at a time); `name` is the author's step name, or the sleep's name."""

    async def step(self, name: str, run: Callable[[], Awaitable[Any]]) -> Any:
        """The result recorded for the step `name` by an earlier run; else `await run()` (the author's
        function; its value is JSON), record its result, and return it. An exception from `run` is not
        recorded: it propagates, and a later run calls `run` again."""

    async def sleep(self, name: str, seconds: float) -> None:
        """Return once the sleep `name` (of `seconds`, > 0) is over: at once when an earlier run reached it
        and its time has passed. Otherwise wait without holding compute: a re-running backend ends the run
        (`Sleeping`) and runs the task again at the end of the sleep."""


class InlineCheckpoints:
    """Outside a task: a step calls its function, a sleep sleeps in the request (refused when it would pass
    the request's `deadline`, an epoch time; None: no bound), or is skipped (`skip_waits`)."""

    def __init__(self, deadline: float | None = None, *, skip_waits: bool = False) -> None:
        self.deadline = deadline
        self.skip_waits = skip_waits

    async def step(self, name: str, run: Callable[[], Awaitable[Any]]) -> Any:
        return await run()

    async def sleep(self, name: str, seconds: float) -> None:
        if self.skip_waits:
            logger.warning(SKIPPED, spoken(seconds))
            return
        if self.deadline is not None and time.time() + seconds > self.deadline:
            left = max(0.0, self.deadline - time.time())
            raise ToolError(
                f"cannot wait {spoken(seconds)} within this request, which must answer in {spoken(left)}: a tool"
                " that waits longer runs as a task (task_support=...), where the task waits instead"
            )
        await asyncio.sleep(seconds)


class Steps:
    """One run's steps and sleeps, as a `Context` sees them: the names used so far, the step running, and
    the backend that keeps them."""

    def __init__(self, checkpoints: Checkpoints, *, in_thread: bool = False) -> None:
        self.checkpoints = checkpoints
        self.in_thread = in_thread
        """Call a sync step function in a worker thread (as the run's handler is)."""
        self._steps: set[str] = set()
        self._sleeps: set[str] = set()
        self._running: str | None = None

    def outside(self, what: str) -> None:
        """Refuse `what` (client input, a sleep, another step) while a step's function runs: the step runs
        once, so it cannot wait for the client or for time, and two at once would have no order."""
        if self._running is not None:
            raise RuntimeError(
                f"{what} while the step {self._running!r} runs: a step runs once, on its own, so it cannot"
                " ask the client, sleep or run another step; do that between steps"
            )

    async def step(self, name: str, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME:
            raise ValueError(f"a step's name is a string of 1 to {MAX_NAME} characters, not {name!r}")
        self.outside(f"ctx.step({name!r})")
        if name in self._steps:
            raise ValueError(
                f"the step name {name!r} is used twice in this run: each ctx.step needs a name of its own (a"
                " re-run finds each step's result by its name)"
            )
        self._steps.add(name)

        async def run() -> Any:
            if self.in_thread and not inspect.iscoroutinefunction(fn):
                value = await anyio.to_thread.run_sync(functools.partial(fn, *args), abandon_on_cancel=True)
            else:
                value = fn(*args)
            if inspect.isawaitable(value):
                value = await value
            return as_json(name, value)

        self._running = name
        try:
            return await self.checkpoints.step(name, run)
        finally:
            self._running = None

    async def sleep(self, seconds: float, name: str | None) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 <= seconds < math.inf:
            raise ValueError(f"ctx.sleep takes a finite number of seconds, at least 0, not {seconds!r}")
        if name is not None and (not isinstance(name, str) or not 0 < len(name) <= MAX_NAME):
            raise ValueError(f"a sleep's name is a string of 1 to {MAX_NAME} characters, not {name!r}")
        self.outside("ctx.sleep()")
        chosen = name if name is not None else _next_free("sleep", self._sleeps)
        if chosen in self._sleeps:
            raise ValueError(f"the sleep name {chosen!r} is used twice in this run: each ctx.sleep needs its own")
        self._sleeps.add(chosen)
        if seconds > 0:  # a sleep of nothing is over before it starts, everywhere: nothing to record
            await self.checkpoints.sleep(chosen, float(seconds))


def _next_free(kind: str, used: set[str]) -> str:
    number, chosen = 1, kind
    while chosen in used:
        number += 1
        chosen = f"{kind}#{number}"
    return chosen


def as_json(name: str, value: Any) -> Any:
    """`value` as JSON gives it back (a tuple becomes a list); TypeError naming the step when it is not
    JSON, since a re-run could not get it back."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"the step {name!r} returned a {type(value).__name__} that is not JSON ({exc}): a step's result is"
            " recorded and given back to later runs, so return JSON (dicts, lists, strings, numbers, bools, None)"
        ) from None


def spoken(seconds: float) -> str:
    """A duration as a person says it: `45 s`, `2 min 5 s`, `2 h`, `1 d 3 h`."""
    if seconds < 60:
        return f"{seconds:.3g} s"
    whole = round(seconds)
    parts = []
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60), ("s", 1)):
        if whole >= size:
            parts.append(f"{whole // size} {unit}")
            whole %= size
    return " ".join(parts[:2])
