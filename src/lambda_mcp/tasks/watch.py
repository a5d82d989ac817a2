"""The watcher of a worker's run: it cancels the run when the task is cancelled, and keeps its reads cheap.

Every tick (the task's poll interval, at least a second) it reads the task's stop flag, a few bytes
that `tasks/cancel` writes (an eventually consistent read: 0.5 read units). The flag's write may fail
past its retries, so every `RECORD_EVERY` ticks, and after a flag read that failed, it also reads the
task's record (a consistent read of up to 350 KB: up to 88 read units, once a minute) and stops the run
when the task is cancelled or otherwise final (or gone). A read that fails never ends the watch.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from ..storage.errors import StorageError
from ..storage.ports import TaskStore
from .execution import Outcome
from .model import TaskRecord

logger = logging.getLogger("lambda_mcp")
RECORD_EVERY = 60
"""Ticks between reads of the task's record (besides those after a failed flag read)."""


async def run_watched(
    store: TaskStore,
    record: TaskRecord,
    start: Callable[[Callable[[], bool]], Awaitable[Outcome]],
    clock: Callable[[], float],
) -> Outcome:
    """`start(is_cancelled)` with the watcher beside it; `Outcome("cancelled")` when the watcher stopped it."""
    cancelled = False

    def is_cancelled() -> bool:
        return cancelled

    run = asyncio.ensure_future(start(is_cancelled))

    async def watch() -> None:
        nonlocal cancelled
        interval = max(1.0, record.poll_interval_ms / 1000)
        tick = 0
        while not run.done():
            await asyncio.sleep(interval)
            tick += 1
            if await _stopped(store, record.task_id, clock, tick % RECORD_EVERY == 0):
                cancelled = True
                run.cancel()
                return

    watcher = asyncio.ensure_future(watch())
    try:
        return await run
    except asyncio.CancelledError:
        if not cancelled:
            raise
        return Outcome("cancelled")
    finally:
        watcher.cancel()


async def _stopped(store: TaskStore, task_id: str, clock: Callable[[], float], read_record: bool) -> bool:
    try:
        if await store.stopped(task_id, clock()):
            return True
    except StorageError:  # one failed read must not end the watch; the record may tell instead
        logger.warning("could not check task %s for cancellation", task_id, exc_info=True)
        read_record = True
    if not read_record:
        return False
    try:
        current = await store.get(task_id, clock())
    except StorageError:
        logger.warning("could not read task %s to check its status", task_id, exc_info=True)
        return False
    return current is None or current.terminal
