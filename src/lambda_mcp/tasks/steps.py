"""`StoredCheckpoints`: a task's steps and sleeps on the backends that re-run its tool (the SQS worker, the
in-process executor), kept in the task store, each in an item of its own beside the task (`STEP#<name>`).

- A step (`step:<name>`): a `started` mark is written before its function runs, and its result replaces
  the mark. A re-run gets the recorded result without calling the function. A re-run that finds a mark
  without a result (its worker was killed or timed out while the step ran, or the result's write failed)
  fails the task (`StepInterrupted`): the function may have had its effects, and a step runs at most once.
  A function that raises leaves nothing (its mark is dropped), so a later run calls it again.
- A sleep (`sleep:<name>`): its wake-up time is recorded and the run ends (`Sleeping`); the runtime leaves
  the task `working`, asleep until then, and the executor (or the sweeper) runs it again. A re-run passes a
  sleep whose time has come at once, and ends again at one whose time has not (an early wake-up).
- Time skipping (`skip_waits`: `lambda-mcp dev`, the test client): a sleep's time is now, so the run ends
  and the task runs again at once, through the same path as a real wait.

The record is read once per run (one Query of the task's checkpoint items), at its first step or sleep.
Every write is conditional and recognises its own write by the run's id when its answer was lost.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from ..server.errors import ToolError
from ..server.steps import SKIPPED, spoken
from ..server.suspensions import Sleeping, StepInterrupted
from ..storage.confirm import confirmed
from ..storage.errors import ConflictError, StorageError
from ..storage.ports import TaskStore
from ..storage.records import StepRecord
from .model import TaskRecord, transition
from .sweeper import RELEASED

logger = logging.getLogger("lambda_mcp")
MAX_RESULT_BYTES = 350_000
"""Largest step result, as JSON: one DynamoDB item holds 400 KB."""


class StoredCheckpoints:
    """One run's checkpoints in the task store. `keep_until`: the expiry of what it writes (the latest the
    task may live: a sleep may extend its life); `latest_wake`: the latest a sleep may end (the task must
    still have time to finish after it)."""

    def __init__(
        self,
        store: TaskStore,
        record: TaskRecord,
        clock: Callable[[], float],
        *,
        keep_until: float,
        latest_wake: float,
        skip_waits: bool = False,
    ) -> None:
        self.store = store
        self.record = record
        self.clock = clock
        self.keep_until = keep_until
        self.latest_wake = latest_wake
        self.skip_waits = skip_waits
        self.run_id = secrets.token_hex(8)
        self._recorded: dict[str, StepRecord] | None = None

    async def _found(self, key: str) -> StepRecord | None:
        if self._recorded is None:
            self._recorded = await self.store.steps(self.record.task_id, self.clock())
        return self._recorded.get(key)

    async def _reread(self, key: str) -> StepRecord | None:
        return (await self.store.steps(self.record.task_id, self.clock())).get(key)

    async def step(self, name: str, run: Callable[[], Awaitable[Any]]) -> Any:
        key, task_id = f"step:{name}", self.record.task_id
        found = await self._found(key)
        if found is not None:
            if found.done:
                return found.result
            raise StepInterrupted(name)
        try:  # a mark whose answer was lost is recognised by its run id; another run's mark: it ran there
            await confirmed(
                lambda: self.store.start_step(task_id, key, self.run_id, self.keep_until),
                lambda: self._reread(key),
                lambda stored: stored.run == self.run_id and not stored.done,
                f"task {task_id}: starting step {name!r}",
            )
        except ConflictError:
            raise StepInterrupted(name) from None
        try:
            result = await run()
            size = len(json.dumps(result, separators=(",", ":")))
            if size > MAX_RESULT_BYTES:
                raise ValueError(
                    f"the result of step {name!r} is {size} bytes of JSON, and a step's result holds at most"
                    f" {MAX_RESULT_BYTES}: store large content elsewhere (S3) and return its key"
                )
        except Exception:
            await self._drop(key)
            raise
        await confirmed(  # when it fails for good the mark stays: the next run fails the task (at most once)
            lambda: self.store.finish_step(task_id, key, self.run_id, result, self.keep_until),
            lambda: self._reread(key),
            lambda stored: stored.run == self.run_id and stored.done,
            f"task {task_id}: recording step {name!r}",
        )
        return result

    async def _drop(self, key: str) -> None:
        try:
            await self.store.drop_step(self.record.task_id, key, self.run_id)
        except StorageError:  # the mark stays: the next run finds the step interrupted, and fails the task
            logger.warning("task %s: could not forget %s after it raised", self.record.task_id, key, exc_info=True)

    async def sleep(self, name: str, seconds: float) -> None:
        key, task_id = f"sleep:{name}", self.record.task_id
        found = await self._found(key)
        now = self.clock()
        if found is not None:
            until = float(found.result["until"])
            if until > now:  # woken early: sleep on
                raise Sleeping(until)
            return
        if now + seconds > self.latest_wake:
            raise ToolError(
                f"this task cannot sleep {spoken(seconds)}: it would wake {spoken(now + seconds - self.latest_wake)}"
                " too late to finish before the longest a task may live (LAMBDA_MCP_TASK_MAX_TTL_SECONDS)"
            )
        until = now if self.skip_waits else now + seconds
        if self.skip_waits:
            logger.warning("task %s: " + SKIPPED, task_id, spoken(seconds))
        try:
            await confirmed(
                lambda: self.store.finish_step(task_id, key, self.run_id, {"until": until}, self.keep_until),
                lambda: self._reread(key),
                lambda stored: stored.run == self.run_id and stored.done,
                f"task {task_id}: recording sleep {name!r}",
            )
        except ConflictError:  # another run recorded it first: its time counts
            stored = await self._reread(key)
            if stored is None:
                raise
            until = float(stored.result["until"])
        raise Sleeping(until)


def asleep(record: TaskRecord, wake_at: float, now: float, longest: float, tail: float) -> TaskRecord:
    """`record` after a run that sleeps until `wake_at`: `working`, released, due then (the sweeper's index), its
    attempts reset (a sleep is an outcome, like a question), and living `tail` seconds past its wake-up to
    finish (its TTL grows, up to `longest`: the longest a task may live)."""
    expires = min(longest, max(record.expires_at, wake_at + tail))
    ttl_ms = round((expires - record.created_at) * 1000)
    woken = {**RELEASED, "due_at": wake_at, "wake_at": wake_at}
    return transition(record, "working", now, attempts=0, expires_at=expires, ttl_ms=ttl_ms, **woken)
