"""Task methods on the wire: creating a task for a call, `tasks/get|update|cancel` (2026 extension),
`tasks/get|list|cancel|result` (2025-11-25), and a legacy client's answers and cancellations for tasks."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from ..observe.invocation import note
from ..polling import Backoff
from ..protocol import jsonrpc, revisions
from ..protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    MCPError,
    insufficient_scope,
    invalid_params,
    method_not_found,
)
from ..protocol.ids import CallStream, TaskInputId, TaskStream, could_be_task_id, new_task_id, parse_input_id
from ..protocol.limits import MAX_ANSWER_BYTES, MAX_RECORDED_ANSWERS_BYTES
from ..protocol.names import RELATED_TASK, TASKS_EXTENSION
from ..server.app import MCPApp
from ..server.suspensions import WaitInterrupted
from ..storage.ports import CallStore
from ..storage.records import CallRecord, TaskRecord
from ..tasks.runtime import TaskRuntime
from .context import Channel, Era, Handler, RequestContext
from .params import json_size

logger = logging.getLogger("lambda_mcp")


def declares_tasks(request: RequestContext) -> bool:
    """Whether this request's client capabilities declare the tasks extension."""
    extensions = request.client_capabilities.get("extensions")
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def legacy_tasks_enabled(era: Era, version: str) -> bool:
    """Core tasks exist from 2025-11-25; older sessions see neither the capability nor the methods."""
    return era == "legacy" and revisions.has_legacy_tasks(version)


def legacy_task_augmented(
    offered: bool, name: str, support: str, params: dict[str, Any], request: RequestContext
) -> bool:
    """2025-11-25 `params.task`: honoured only where the tasks capability was advertised (`offered`, and
    ignored elsewhere); -32601 for a task on a forbidden tool and for a required tool called without one."""
    augmented = offered and legacy_tasks_enabled(request.era, request.version) and isinstance(params.get("task"), dict)
    if augmented and support == "forbidden":
        raise MCPError(METHOD_NOT_FOUND, f"Tool {name!r} does not support task-augmented calls")
    if support == "required" and not augmented:
        raise MCPError(METHOD_NOT_FOUND, f"Tool {name!r} must be called as a task (params.task)")
    return augmented


def tasks_extension_required(message: str) -> MCPError:
    return MCPError(MISSING_CLIENT_CAPABILITY, message, {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})


def owner_of(request: RequestContext) -> str:
    """Tasks belong to the authenticated principal; else to the legacy session; else to whoever holds the id."""
    if request.principal:
        return f"principal:{request.principal}"
    if request.session is not None:
        return f"session:{request.session.session_id}"
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


def _with_meta(message: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    params = dict(message.get("params") or {})
    params["_meta"] = {**(params.get("_meta") or {}), **meta}
    return {**message, "params": params}


def _too_much(record: TaskRecord, answers: dict[str, Any]) -> str | None:
    """Why answers cannot be recorded on a task (one over `MAX_ANSWER_BYTES`, or all it would keep over
    `MAX_RECORDED_ANSWERS_BYTES`), or None."""
    sizes = [json_size(answer) for answer in answers.values()]
    if any(size > MAX_ANSWER_BYTES for size in sizes):
        return f"An answer takes more than {MAX_ANSWER_BYTES} bytes"
    if sizes and json_size(record.input_responses) + sum(sizes) > MAX_RECORDED_ANSWERS_BYTES:
        return f"The task's answers would take more than {MAX_RECORDED_ANSWERS_BYTES} bytes"
    return None


def cancelled_error(task_id: str) -> dict[str, Any]:
    return {"code": INTERNAL_ERROR, "message": "Task was cancelled", "data": {"taskId": task_id}}


class TaskMethods:
    def __init__(self, runtime: TaskRuntime, app: MCPApp, calls: CallStore) -> None:
        self.runtime = runtime
        self.app = app
        self.calls = calls
        """Where a legacy task's creating request leaves its marker (found by `notifications/cancelled`)."""

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
        self, method: str, params: dict[str, Any], request: RequestContext, answers: dict[str, Any]
    ) -> dict[str, Any]:
        """Create the task durably and answer with the era's CreateTaskResult (nested legacy, flat modern)."""
        if json_size(answers) > MAX_RECORDED_ANSWERS_BYTES:
            raise invalid_params(f"the answers so far take more than {MAX_RECORDED_ANSWERS_BYTES} bytes")
        requested = params.get("task")
        ttl = requested.get("ttl") if request.era == "legacy" and isinstance(requested, dict) else None
        session = request.session
        task_id = new_task_id()
        marked = request.era == "legacy" and session is not None and request.request_id is not None
        if marked:
            # the marker a cancel of this request finds, written first: if it fails, nothing exists yet and
            # the client's retry (after our 503) creates the task once; written after, a failure here would
            # have told the client to retry a task that exists and will run
            await self._mark(request, task_id)
        record = await self.runtime.create(
            task_id=task_id,
            owner=owner_of(request),
            method=method,
            params=params,
            wire=request.era,
            protocol_version=request.version,
            client_capabilities=dict(request.client_capabilities),
            answers=answers,
            requested_ttl_ms=ttl if isinstance(ttl, int) and ttl > 0 else None,
            session_id=session.session_id if session else None,
            request_id=request.request_id,
            log_level=((session.log_level if session else None) or "debug") if request.era == "legacy" else None,
            scopes=sorted(request.scopes) if request.scopes is not None else None,
            claims=dict(request.claims),
        )  # `SubmitFailed` when the queue is down: the dispatcher answers 503, the client tries again
        if marked and record.task_id != task_id:  # a retry of the request, answered with the task it created
            await self._mark(request, record.task_id)
        note(task_id=record.task_id)
        if request.era == "legacy":
            return {"task": legacy_task(record)}
        return {"resultType": "task", **modern_task(record, detailed=False)}

    async def _mark(self, request: RequestContext, task_id: str) -> None:
        """Leave the marker a legacy `notifications/cancelled` naming this request finds: it names the task."""
        assert request.session is not None and request.request_id is not None
        stream = CallStream(request.request_id).format()
        now = self.runtime.clock()
        expires = now + self.runtime.max_ttl_ms / 1000
        await self.calls.start(CallRecord(request.session.session_id, stream, "", {}, now, expires, task_id=task_id))

    # -- 2026 extension methods -----------------------------------------------------------
    async def _lookup(self, params: dict[str, Any], request: RequestContext) -> TaskRecord:
        """The caller's task named by `taskId`; -32602 when it is not one (unknown, expired, someone else's)."""
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise invalid_params('"taskId" must be a string')
        record = await self.runtime.get(task_id, owner_of(request)) if could_be_task_id(task_id) else None
        if record is None:
            raise invalid_params(f"Unknown or expired task: {task_id}")
        note(task_id=record.task_id)
        unmet = self.app.unmet_scopes(request.scopes, record.method, record.params)
        if unmet:  # its owner, with a token that may no longer use the tool: not its result, nor a say in it
            raise insufficient_scope(unmet)
        return record

    async def _record(self, params: dict[str, Any], request: RequestContext) -> TaskRecord:
        if not declares_tasks(request):
            raise tasks_extension_required(f"Task methods need the {TASKS_EXTENSION} extension")
        return await self._lookup(params, request)

    async def _get(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        return modern_task(await self._record(params, request), detailed=True)

    async def _update(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        record = await self._record(params, request)
        responses = params.get("inputResponses")
        if isinstance(responses, dict):
            answers = {k: v for k, v in responses.items() if isinstance(v, dict) and k in record.input_requests}
            problem = _too_much(record, answers)
            if problem is not None:
                raise invalid_params(problem)
            # answers already recorded are passed on too: a client's retry of an answer whose write landed
            # unseen queues the task again (tasks/runtime.py `answer`)
            again = {k: v for k, v in responses.items() if isinstance(v, dict) and k in record.input_responses}
            await self.runtime.answer(record, {**again, **answers})
        return {}

    async def _cancel(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        await self.runtime.cancel(await self._record(params, request))
        return {}

    # -- 2025-11-25 core task methods -----------------------------------------------------
    async def _legacy_record(self, params: dict[str, Any], request: RequestContext, method: str) -> TaskRecord:
        if not legacy_tasks_enabled(request.era, request.version):
            raise method_not_found(method)
        return await self._lookup(params, request)

    async def _legacy_get(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        return legacy_task(await self._legacy_record(params, request, "tasks/get"))

    async def _legacy_list(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        if not legacy_tasks_enabled(request.era, request.version):
            raise method_not_found("tasks/list")
        cursor = params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise invalid_params("cursor must be a string")
        try:
            records, next_cursor = await self.runtime.store.list_owned(
                owner_of(request), self.runtime.clock(), cursor, limit=self.app.page_size
            )
        except ValueError as exc:
            raise invalid_params("Invalid cursor") from exc
        result: dict[str, Any] = {"tasks": [legacy_task(r) for r in records]}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    async def _legacy_cancel(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        record = await self._legacy_record(params, request, "tasks/cancel")
        if not record.terminal:
            record = await self.runtime.cancel(record)
            if record.status == "cancelled":
                return legacy_task(record)
        # final already, or it reached a final status before the cancel landed
        raise invalid_params(f"Task {record.task_id} is already {record.status} and cannot be cancelled")

    async def _legacy_result(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        """Block until the task is final by polling storage (backoff up to its poll interval), relaying
        what the worker logged and the task's input requests on the way, then answer exactly as the
        call would have: its result, or the same JSON-RPC error. A buffered transport's wait hands back
        (`WaitInterrupted`) at its deadline, or at once when requests went to the client."""
        record = await self._legacy_record(params, request, "tasks/result")
        backoff = Backoff(channel.deadline, limit=record.poll_interval_ms / 1000)
        while True:
            asked = await self._relay(record, channel)
            if record.terminal:
                break
            if (asked and channel.deadline is not None) or not await backoff.sleep():
                raise WaitInterrupted(record.task_id)  # buffered: what was sent must reach the client now
            fresh = await self.runtime.store.get(record.task_id, self.runtime.clock())
            if fresh is None:
                raise invalid_params(f"Unknown or expired task: {record.task_id}")
            if fresh.status == "input_required" and record.status != "input_required":
                backoff.reset()
            record = fresh
        related = {RELATED_TASK: {"taskId": record.task_id}}
        if record.result is not None:
            result = dict(record.result)
            result["_meta"] = {**(result.get("_meta") or {}), **related}
            return result
        error = record.error or cancelled_error(record.task_id)
        raise MCPError(int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "")), error.get("data"))

    async def _relay(self, record: TaskRecord, channel: Channel) -> bool:
        """Send what the task's runs logged since the last relay, then any input request not yet sent
        (all with related-task metadata). Returns whether requests went out."""
        progress = channel.wait
        related = {RELATED_TASK: {"taskId": record.task_id}}
        events = self.runtime.events
        if events is not None and record.session_id is not None:
            stream = TaskStream(record.task_id).format()
            for event in await events.read(record.session_id, stream, progress.relayed):
                progress.relayed = event.seq
                if event.message is not None:
                    await channel.send(_with_meta(event.message, related))
        asked = False
        if record.status == "input_required":
            for key, input_request in record.input_requests.items():
                if key in progress.asked:
                    continue
                request_id = TaskInputId(record.task_id, key).format()
                message = jsonrpc.request(request_id, input_request["method"], input_request.get("params"))
                await channel.send(_with_meta(message, related))
                progress.asked.append(key)
                asked = True
        return asked

    async def answer_input(self, request: RequestContext, response: dict[str, Any]) -> bool:
        """A legacy client's response to a task's input request (sent by `tasks/result`): store it as
        the answer for its key, which resumes the task once none is outstanding. False if the id is
        not a task input request."""
        answered = parse_input_id(response.get("id"))
        if not isinstance(answered, TaskInputId):
            return False
        record = await self.runtime.get(answered.task_id, owner_of(request))
        if record is None or self.app.unmet_scopes(request.scopes, record.method, record.params):
            return True  # ours in shape, but not this caller's task (or gone, or beyond its scopes): nothing stored
        if "error" in response:
            answer = {"error": response["error"]}
        else:
            result = response.get("result")
            answer = result if isinstance(result, dict) else {}
        problem = _too_much(record, {answered.key: answer})
        if problem is not None:  # the handler gets a client error for it: the task goes on, within its bounds
            answer = {"error": {"code": INVALID_PARAMS, "message": problem}}
        await self.runtime.answer(record, {answered.key: answer})
        return True

    async def cancel_created_task(self, request: RequestContext, task_id: str) -> None:
        """Legacy `notifications/cancelled` naming the request that created a task (its marker names the
        task): cancel the task, as `tasks/cancel` would (the spec asks clients for `tasks/cancel`)."""
        record = await self.runtime.get(task_id, owner_of(request))
        if record is not None and not record.terminal:
            await self.runtime.cancel(record)
