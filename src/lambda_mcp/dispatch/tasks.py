"""Task methods on the wire: creating a task for a call, `tasks/get|update|cancel` (2026 extension),
and running a task's call once for the runtime (the same dispatch path as an inline call)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..protocol import b64url, jsonrpc, shaping
from ..protocol.errors import INTERNAL_ERROR, MISSING_CLIENT_CAPABILITY, MCPError, invalid_params, method_not_found
from ..server.context import CancelledByClient, InputRequired
from ..tasks.model import TaskRecord
from ..tasks.runtime import EXTENSION, Notify, Outcome, SubmitFailed, TaskRuntime, task_stream
from .scope import Handler, RequestScope, WaitInterrupted

if TYPE_CHECKING:
    from .dispatcher import Dispatcher

logger = logging.getLogger("lambda_mcp")
RELATED_TASK = "io.modelcontextprotocol/related-task"
LEGACY_CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
"""The 2025-11-25 `tasks` server capability: tools/call may be task-augmented; list and cancel work."""


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


def _task_fields(record: TaskRecord, ttl_key: str, poll_key: str) -> dict[str, Any]:
    """The Task fields both eras share; only the names of the ttl and poll interval differ."""
    task: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": _iso(record.created_at),
        "lastUpdatedAt": _iso(record.updated_at or record.created_at),
        ttl_key: record.ttl_ms,
        poll_key: record.poll_interval_ms,
    }
    if record.status_message:
        task["statusMessage"] = record.status_message
    return task


def modern_task(record: TaskRecord, *, detailed: bool) -> dict[str, Any]:
    """The flat 2026 task: CreateTaskResult fields, plus result / error / inputRequests when `detailed`."""
    task = _task_fields(record, "ttlMs", "pollIntervalMs")
    if detailed:
        if record.status == "input_required":
            task["inputRequests"] = record.input_requests
        elif record.status == "completed" and record.result is not None:
            task["result"] = record.result
        elif record.status == "failed" and record.error is not None:
            task["error"] = record.error
    return task


def legacy_task(record: TaskRecord) -> dict[str, Any]:
    """The 2025-11-25 `Task`: `ttl` and `pollInterval` in ms (the 2026 names end in `Ms`)."""
    return _task_fields(record, "ttl", "pollInterval")


def input_request_id(task_id: str, key: str) -> str:
    """The id of a task's input request on the legacy wire: the task (an unguessable id) and the key."""
    return f"task.{task_id}.{b64url.encode_text(key)}"


def parse_input_request_id(request_id: object) -> tuple[str, str] | None:
    if not isinstance(request_id, str) or not request_id.startswith("task."):
        return None
    parts = request_id.split(".")
    key = b64url.decode_text(parts[2]) if len(parts) == 3 and parts[1] else None
    return None if key is None else (parts[1], key)


def _with_meta(message: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    params = dict(message.get("params") or {})
    params["_meta"] = {**(params.get("_meta") or {}), **meta}
    return {**message, "params": params}


def cancelled_error(task_id: str) -> dict[str, Any]:
    return {"code": INTERNAL_ERROR, "message": "Task was cancelled", "data": {"taskId": task_id}}


class TaskMethods:
    def __init__(self, runtime: TaskRuntime, dispatcher: Dispatcher) -> None:
        self.runtime = runtime
        self.dispatcher = dispatcher
        runtime.execute = self.execute

    def modern_handlers(self) -> dict[str, Handler]:
        return {"tasks/get": self._get, "tasks/update": self._update, "tasks/cancel": self._cancel}

    def legacy_handlers(self) -> dict[str, Handler]:
        return {
            "tasks/get": self._legacy_get,
            "tasks/list": self._legacy_list,
            "tasks/cancel": self._legacy_cancel,
            "tasks/result": self._legacy_result,
        }

    async def create(
        self, method: str, params: dict[str, Any], scope: RequestScope, answers: dict[str, Any]
    ) -> dict[str, Any]:
        """Create the task durably and answer with the era's CreateTaskResult (nested legacy, flat modern)."""
        requested = params.get("task")
        ttl = requested.get("ttl") if scope.era == "legacy" and isinstance(requested, dict) else None
        try:
            record = await self.runtime.create(
                owner=owner_of(scope),
                method=method,
                params=params,
                wire=scope.era,
                protocol_version=scope.version,
                client_capabilities=scope.client_capabilities,
                answers=answers,
                requested_ttl_ms=ttl if isinstance(ttl, int) and ttl > 0 else None,
                session_id=scope.session.session_id if scope.session else None,
                request_id=scope.request_id,
                log_level=((scope.session.log_level if scope.session else None) or "debug")
                if scope.era == "legacy"
                else None,
                scopes=sorted(scope.scopes) if scope.scopes is not None else None,
            )
        except SubmitFailed as exc:
            raise MCPError(INTERNAL_ERROR, "The task could not be queued for execution; try again") from exc
        if scope.era == "legacy":
            return {"task": legacy_task(record)}
        return {"resultType": "task", **modern_task(record, detailed=False)}

    # -- 2026 extension methods -----------------------------------------------------------
    async def _lookup(self, params: dict[str, Any], scope: RequestScope) -> TaskRecord:
        """The caller's task named by `taskId`; -32602 when it is not one (unknown, expired, someone else's)."""
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise invalid_params('"taskId" must be a string')
        record = await self.runtime.get(task_id, owner_of(scope))
        if record is None:
            raise invalid_params(f"Unknown or expired task: {task_id}")
        return record

    async def _record(self, params: dict[str, Any], scope: RequestScope) -> TaskRecord:
        if not declares_tasks(scope):
            raise tasks_extension_required(f"Task methods need the {EXTENSION} extension")
        return await self._lookup(params, scope)

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

    # -- 2025-11-25 core task methods -----------------------------------------------------
    def legacy_enabled(self, scope: RequestScope) -> bool:
        """Core tasks exist from 2025-11-25; older sessions see neither the capability nor the methods."""
        return scope.era == "legacy" and scope.version == "2025-11-25"

    def _require_legacy(self, scope: RequestScope, method: str) -> None:
        if not self.legacy_enabled(scope):
            raise method_not_found(method)

    async def _legacy_record(self, params: dict[str, Any], scope: RequestScope, method: str) -> TaskRecord:
        self._require_legacy(scope, method)
        return await self._lookup(params, scope)

    async def _legacy_get(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        return legacy_task(await self._legacy_record(params, scope, "tasks/get"))

    async def _legacy_list(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        self._require_legacy(scope, "tasks/list")
        cursor = params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise invalid_params("cursor must be a string")
        try:
            records, next_cursor = await self.runtime.store.list_owned(
                owner_of(scope), self.runtime.clock(), cursor, limit=self.dispatcher.app.page_size
            )
        except ValueError as exc:
            raise invalid_params("Invalid cursor") from exc
        result: dict[str, Any] = {"tasks": [legacy_task(r) for r in records]}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    async def _legacy_cancel(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        record = await self._legacy_record(params, scope, "tasks/cancel")
        if not record.terminal:
            record = await self.runtime.cancel(record)
            if record.status == "cancelled":
                return legacy_task(record)
        # final already, or it reached a final status before the cancel landed
        raise invalid_params(f"Task {record.task_id} is already {record.status} and cannot be cancelled")

    async def _legacy_result(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        """Block until the task is final by polling storage (backoff up to its poll interval), relaying
        what the worker logged and the task's input requests on the way, then answer exactly as the
        call would have: its result, or the same JSON-RPC error."""
        record = await self._legacy_record(params, scope, "tasks/result")
        delay = 0.05
        while True:
            asked = await self._relay(record, scope)
            if record.terminal:
                break
            if scope.wait_until is not None and (asked or time.time() + delay >= scope.wait_until):
                raise WaitInterrupted(record.task_id)  # buffered: what was sent must reach the client now
            await asyncio.sleep(delay)
            delay = min(delay * 2, record.poll_interval_ms / 1000)
            fresh = await self.runtime.store.get(record.task_id, self.runtime.clock())
            if fresh is None:
                raise invalid_params(f"Unknown or expired task: {record.task_id}")
            if fresh.status == "input_required" and record.status != "input_required":
                delay = 0.05
            record = fresh
        related = {RELATED_TASK: {"taskId": record.task_id}}
        if record.result is not None:
            result = dict(record.result)
            result["_meta"] = {**(result.get("_meta") or {}), **related}
            return result
        error = record.error or cancelled_error(record.task_id)
        raise MCPError(int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "")), error.get("data"))

    async def _relay(self, record: TaskRecord, scope: RequestScope) -> bool:
        """Send what the task's runs logged since the last relay, then any input request not yet sent
        (all with related-task metadata). Returns whether requests went out."""
        progress = scope.wait_progress
        related = {RELATED_TASK: {"taskId": record.task_id}}
        events = self.runtime.events
        if events is not None and record.session_id is not None:
            for event in await events.read(record.session_id, task_stream(record.task_id), progress.relayed):
                progress.relayed = event.seq
                if event.message is not None:
                    await scope.send(_with_meta(event.message, related))
        asked = False
        if record.status == "input_required":
            for key, request in record.input_requests.items():
                if key in progress.asked:
                    continue
                message = jsonrpc.request(
                    input_request_id(record.task_id, key), request["method"], request.get("params")
                )
                await scope.send(_with_meta(message, related))
                progress.asked.append(key)
                asked = True
        return asked

    async def answer_input(self, scope: RequestScope, response: dict[str, Any]) -> bool:
        """A legacy client's response to a task's input request (sent by `tasks/result`): store it as
        the answer for its key, which resumes the task once none is outstanding. False if the id is
        not a task input request of this caller's."""
        parsed = parse_input_request_id(response.get("id"))
        if parsed is None:
            return False
        task_id, key = parsed
        record = await self.runtime.get(task_id, owner_of(scope))
        if record is None:
            return True  # ours in shape, but not this caller's task (or gone): nothing to store
        if "error" in response:
            answer = {"error": response["error"]}
        else:
            result = response.get("result")
            answer = result if isinstance(result, dict) else {}
        await self.runtime.answer(record, {key: answer})
        return True

    async def cancel_created_by(self, scope: RequestScope, request_id: object) -> bool:
        """Legacy `notifications/cancelled` naming the request that created a task: cancel the task
        (the spec asks clients to use `tasks/cancel`; this honours the notification the same way)."""
        if scope.session is None or not isinstance(request_id, str | int) or isinstance(request_id, bool):
            return False
        cursor: str | None = None
        for _ in range(20):
            records, cursor = await self.runtime.store.list_owned(owner_of(scope), self.runtime.clock(), cursor)
            for record in records:
                if record.session_id == scope.session.session_id and record.request_id == request_id:
                    if not record.terminal:
                        await self.runtime.cancel(record)
                    return True
            if cursor is None:
                break
        return False

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
            scopes=frozenset(record.scopes) if record.scopes is not None else None,
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
        elif shaped.get("isError") is True:  # 2025-11-25: a tool error fails the task (tasks/result returns it)
            return Outcome("failed", result=shaped)
        return Outcome("completed", result=shaped)
