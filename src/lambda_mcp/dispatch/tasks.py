"""Task methods on the wire: creating a task for a call, `tasks/get|update|cancel` (2026 extension),
and running a task's call once for the runtime (the same dispatch path as an inline call)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..protocol import shaping
from ..protocol.errors import INTERNAL_ERROR, MISSING_CLIENT_CAPABILITY, MCPError, invalid_params
from ..server.context import CancelledByClient, InputRequired
from ..tasks.model import TaskRecord
from ..tasks.runtime import EXTENSION, Notify, Outcome, SubmitFailed, TaskRuntime
from .scope import Handler, RequestScope

if TYPE_CHECKING:
    from .dispatcher import Dispatcher

logger = logging.getLogger("lambda_mcp")


def declares_tasks(scope: RequestScope) -> bool:
    """Whether this request's client capabilities declare the tasks extension."""
    extensions = scope.client_capabilities.get("extensions")
    return isinstance(extensions, dict) and EXTENSION in extensions


def tasks_extension_required(message: str) -> MCPError:
    return MCPError(MISSING_CLIENT_CAPABILITY, message, {"requiredCapabilities": {"extensions": {EXTENSION: {}}}})


def owner_of(scope: RequestScope) -> str:
    """Tasks belong to the authenticated principal; else to the legacy session; else to whoever holds the id."""
    if scope.principal:
        return f"principal:{scope.principal}"
    if scope.session is not None:
        return f"session:{scope.session.session_id}"
    return "anonymous"


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def modern_task(record: TaskRecord, *, detailed: bool) -> dict[str, Any]:
    """The flat 2026 task: CreateTaskResult fields, plus result / error / inputRequests when `detailed`."""
    task: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": _iso(record.created_at),
        "lastUpdatedAt": _iso(record.updated_at or record.created_at),
        "ttlMs": record.ttl_ms,
        "pollIntervalMs": record.poll_interval_ms,
    }
    if record.status_message:
        task["statusMessage"] = record.status_message
    if detailed:
        if record.status == "input_required":
            task["inputRequests"] = record.input_requests
        elif record.status == "completed" and record.result is not None:
            task["result"] = record.result
        elif record.status == "failed" and record.error is not None:
            task["error"] = record.error
    return task


class TaskMethods:
    def __init__(self, runtime: TaskRuntime, dispatcher: Dispatcher) -> None:
        self.runtime = runtime
        self.dispatcher = dispatcher
        runtime.execute = self.execute

    def modern_handlers(self) -> dict[str, Handler]:
        return {"tasks/get": self._get, "tasks/update": self._update, "tasks/cancel": self._cancel}

    async def create(
        self, method: str, params: dict[str, Any], scope: RequestScope, answers: dict[str, Any]
    ) -> dict[str, Any]:
        try:
            record = await self.runtime.create(
                owner=owner_of(scope),
                method=method,
                params=params,
                wire=scope.era,
                protocol_version=scope.version,
                client_capabilities=scope.client_capabilities,
                answers=answers,
                session_id=scope.session.session_id if scope.session else None,
            )
        except SubmitFailed as exc:
            raise MCPError(INTERNAL_ERROR, "The task could not be queued for execution; try again") from exc
        return {"resultType": "task", **modern_task(record, detailed=False)}

    # -- 2026 extension methods -----------------------------------------------------------
    async def _record(self, params: dict[str, Any], scope: RequestScope) -> TaskRecord:
        if not declares_tasks(scope):
            raise tasks_extension_required(f"Task methods need the {EXTENSION} extension")
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise invalid_params('"taskId" must be a string')
        record = await self.runtime.get(task_id, owner_of(scope))
        if record is None:
            raise invalid_params(f"Unknown task: {task_id}")
        return record

    async def _get(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        return modern_task(await self._record(params, scope), detailed=True)

    async def _update(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        record = await self._record(params, scope)
        responses = params.get("inputResponses")
        if isinstance(responses, dict):
            await self.runtime.answer(record, {k: v for k, v in responses.items() if isinstance(v, dict)})
        return {}

    async def _cancel(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        await self.runtime.cancel(await self._record(params, scope))
        return {}

    # -- running a task's call --------------------------------------------------------------
    async def execute(self, record: TaskRecord, is_cancelled: Callable[[], bool], notify: Notify) -> Outcome:
        """Run the task's `tools/call` once, with its recorded answers, and say how it ended."""
        dispatcher = self.dispatcher
        name = record.params.get("name")
        tool = dispatcher.app.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return Outcome("failed", error={"code": -32602, "message": f"Unknown tool: {name}"})
        arguments = record.params.get("arguments") or {}
        scope = RequestScope(
            era=record.wire,
            version=record.protocol_version or "",
            request_id=record.task_id,
            client_capabilities=record.client_capabilities,
            principal=record.owner.removeprefix("principal:") if record.owner.startswith("principal:") else None,
            send=notify,
            is_cancelled=is_cancelled,
        )
        try:
            result = await dispatcher._run(
                "tools/call", record.params, scope, lambda ctx: tool.run(arguments, ctx), task=record
            )
        except InputRequired as suspension:
            return Outcome("input_required", input_requests=suspension.requests)
        except CancelledByClient:
            return Outcome("cancelled")
        except MCPError as exc:
            return Outcome("failed", error=exc.to_error())
        except Exception:
            logger.exception("task %s failed", record.task_id)
            return Outcome("failed", error={"code": INTERNAL_ERROR, "message": "Internal error"})
        shaped = shaping.tool_result(result, scope.version)
        if record.wire == "modern":
            shaped.setdefault("resultType", "complete")
        return Outcome("completed", result=shaped)
