"""`InProcessExecutor`: run tasks on this process's own event loop (the streaming dev server's default)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

WAKE_MARGIN_SECONDS = 0.01
"""A sleeping task's timer fires this much after its wake-up time (a timer may fire a little early)."""


class InProcessExecutor:
    """Runs tasks as asyncio tasks in this process (`run`, the runtime's own `run`): the embedded
    default of `lambda-mcp dev`. A sleeping task's wake-up is a timer of this process's loop."""

    def __init__(self, run: Callable[[str], Coroutine[Any, Any, Any]]) -> None:
        self._run = run
        self._running: dict[str, asyncio.Task[Any]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}

    async def submit(self, task_id: str) -> None:
        self._start(task_id)

    def _start(self, task_id: str) -> None:
        self._timers.pop(task_id, None)
        task = asyncio.get_running_loop().create_task(self._run(task_id))
        self._running[task_id] = task
        task.add_done_callback(lambda _: self._running.pop(task_id, None))

    async def submit_later(self, task_id: str, delay: float) -> None:
        if delay <= 0:
            self._start(task_id)
            return
        loop = asyncio.get_running_loop()
        self._timers[task_id] = loop.call_later(delay + WAKE_MARGIN_SECONDS, self._start, task_id)

    async def close(self) -> None:
        """Cancel the runs still going and the wake-ups still ahead (a test client's end), and wait for the
        runs to stop."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        running = list(self._running.values())
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    def cancel(self, task_id: str) -> None:
        timer = self._timers.pop(task_id, None)
        if timer is not None:
            timer.cancel()
        running = self._running.get(task_id)
        if running is not None:
            running.cancel()
