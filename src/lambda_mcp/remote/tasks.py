"""Tools that run as tasks. In 2026-07-28 (the tasks extension) a call may come back as a task, which is
polled with `tasks/get`, its input requests answered with `tasks/update`, until it ends. In 2025-11-25
a tool that runs only as a task is called with `params.task` and its result fetched with `tasks/result`
(which blocks, delivering the task's elicitations on its stream). Ctrl-C cancels the task."""

from __future__ import annotations

import sys
import time
from typing import Any, Protocol

from .failures import ERROR_RESULT, RemoteFailure, RpcError, one_line
from .session import find

DEFAULT_POLL_MS = 1000


class _Requesting(Protocol):
    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]: ...


class _Asking(_Requesting, Protocol):
    def answer_all(self, asked: dict[str, Any]) -> dict[str, Any]: ...


def _cancel(session: _Requesting, task_id: str) -> None:
    try:
        session.request("tasks/cancel", {"taskId": task_id})
        print(f"cancelled task {task_id}", file=sys.stderr)
    except RemoteFailure:
        pass


def follow(session: _Asking, created: dict[str, Any]) -> dict[str, Any]:
    """Poll a 2026 task (a `resultType: "task"` result) to its end; the tool's result."""
    task_id = str(created.get("taskId"))
    interval = created.get("pollIntervalMs") or DEFAULT_POLL_MS
    answered: set[str] = set()
    said: str | None = None
    try:
        while True:
            task = session.request("tasks/get", {"taskId": task_id})
            status = task.get("status")
            note = task.get("statusMessage")
            if isinstance(note, str) and note != said:
                print(f"[task {status}] {one_line(note)}", file=sys.stderr, flush=True)
                said = note
            if status == "completed":
                result = task.get("result")
                return result if isinstance(result, dict) else {}
            if status == "failed":
                error = task.get("error")
                raise RpcError(error if isinstance(error, dict) else {"message": f"task {task_id} failed"})
            if status == "cancelled":
                raise RemoteFailure(f"task {task_id} was cancelled", ERROR_RESULT)
            pending = {k: v for k, v in (task.get("inputRequests") or {}).items() if k not in answered}
            if status == "input_required" and pending:
                responses = session.answer_all(pending)
                session.request("tasks/update", {"taskId": task_id, "inputResponses": responses})
                answered |= set(pending)
                continue
            interval = task.get("pollIntervalMs") or interval
            time.sleep(min(max(float(interval), 50.0), 5000.0) / 1000)
    except KeyboardInterrupt:
        _cancel(session, task_id)
        raise


def run_legacy(session: _Requesting, params: dict[str, Any]) -> dict[str, Any]:
    """Call a 2025-11-25 tool as a task and wait for its result with `tasks/result`."""
    created = session.request("tools/call", {**params, "task": {}})
    task = created.get("task")
    if not isinstance(task, dict) or "taskId" not in task:
        return created  # the server ran it at once after all
    try:
        return session.request("tasks/result", {"taskId": task["taskId"]})
    except KeyboardInterrupt:
        _cancel(session, str(task["taskId"]))
        raise


def task_support(session: _Requesting, tool: str) -> str | None:
    """A tool's `execution.taskSupport` from `tools/list` (2025-11-25), if it is listed."""
    execution = (find(session, "tools/list", "tools", tool) or {}).get("execution")
    support = execution.get("taskSupport") if isinstance(execution, dict) else None
    return support if isinstance(support, str) else None
