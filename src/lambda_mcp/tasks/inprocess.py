"""`InProcessExecutor`: run tasks on this process's own event loop (the streaming dev server's default)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any


class InProcessExecutor:
    """Runs tasks as asyncio tasks in this process (`run`, the runtime's own `run`): the embedded
    default of `lambda-mcp dev`."""

    def __init__(self, run: Callable[[str], Coroutine[Any, Any, Any]]) -> None:
        self._run = run
        self._running: dict[str, asyncio.Task[Any]] = {}

    async def submit(self, task_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._run(task_id))
        self._running[task_id] = task
        task.add_done_callback(lambda _: self._running.pop(task_id, None))

    async def close(self) -> None:
        """Cancel the runs still going (a test client's end) and wait for them to stop."""
        running = list(self._running.values())
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    def cancel(self, task_id: str) -> None:
        running = self._running.get(task_id)
        if running is not None:
            running.cancel()
