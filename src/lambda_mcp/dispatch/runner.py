"""Run a handler (user code) for one request: give it a `Context` for its era and transport, and turn a
suspension into the era's answer.

- 2026: answers come from `inputResponses` and the sealed `requestState`; a suspension becomes an
  `InputRequiredResult` with a new sealed state.
- legacy: the channel decides (`dispatch/inputs.py`): ask over a live stream, re-run with recorded
  answers, or refuse.
- a task's run (`execute_task`, for the task runtime): answers from the task record; a suspension
  parks the task in `input_required`, a sleep ends the run (`Sleeping`), and steps are kept by the
  run's checkpoints (`TaskRun`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..observe.invocation import count
from ..protocol import jsonrpc, shaping
from ..protocol.errors import INTERNAL_ERROR, MCPError, invalid_params
from ..protocol.names import LOG_LEVELS, META_LOG_LEVEL
from ..server.app import MCPApp
from ..server.call import CallInfo, Hooks, InputChannel
from ..server.context import Context
from ..server.credentials import Credentials
from ..server.errors import ToolError
from ..server.middleware import through
from ..server.steps import InlineCheckpoints
from ..server.suspensions import CancelledByClient, InputRequired, Sleeping, StepInterrupted, TaskStarted
from ..server.tools import Tool, error_result
from ..storage.errors import StorageUnavailable
from ..storage.records import TaskRecord
from ..tasks.execution import Outcome, TaskRun
from .context import Channel, RequestContext
from .inputs import LegacyBufferedInput, LegacyStreamingInput, ModernInput, NoInput
from .request_state import StateSealer
from .rounds import Outbox, Recorded

logger = logging.getLogger("lambda_mcp")
Body = Callable[[Context], Awaitable[dict[str, Any]]]
_FIRST_ROUND = Recorded()


class HandlerRunner:
    def __init__(
        self,
        app: MCPApp,
        sealer: StateSealer,
        *,
        sync_in_threads: bool = False,
        skip_waits: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.app = app
        self.sealer = sealer
        self.sync_in_threads = sync_in_threads
        """Run sync handlers in worker threads (a server with concurrent requests). Task runs always do:
        a worker runs the records of a batch concurrently."""
        self.skip_waits = skip_waits
        """Time skipping (`lambda-mcp dev`, the test client): `ctx.sleep` outside a task returns at once."""
        self.clock = clock
        self.credentials: Credentials | None = None
        """What `ctx.connection` and `ctx.upstream_token` use: the facade's (set by the kit in proxy mode) or
        the test client's seeded ones."""

    async def run(
        self,
        method: str,
        params: dict[str, Any],
        request: RequestContext,
        channel: Channel,
        body: Body,
        *,
        start_task: bool = False,
        task: TaskRecord | None = None,
    ) -> dict[str, Any]:
        """Run `body` with a `Context`; on the modern wire a suspension becomes an InputRequiredResult.

        `start_task`: `ctx.start_task()` ends the inline run (`TaskStarted` carries the answers so far).
        `task`: the run is a task's (answers come from its record; a suspension propagates).
        """
        raw_meta = params.get("_meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        now = self.clock()
        capabilities = dict(request.client_capabilities)
        inputs: InputChannel
        modern: ModernInput | None = None
        delivered = 0
        """Notifications are numbered in run order: a re-run's first ones an earlier MRTR round delivered are
        dropped (a buffered legacy call's channel numbers its own, requests included)."""
        call_key = ""  # empty: `ctx.idempotency_key` mints one if the handler reads it
        if task is not None:
            inputs = modern = ModernInput(dict(task.input_responses), capabilities)
            log_level = task.log_level
            call_key = f"task:{task.task_id}"
        elif request.era == "modern":
            recorded = self._modern_state(method, params, request, now)
            inputs = modern = ModernInput(dict(recorded.answers), capabilities)
            delivered = recorded.delivered
            log_level = _modern_log_level(meta)
            call_key = recorded.call_key
        else:
            if channel.round is not None:
                call_key = f"call:{channel.round.nonce}"
            if channel.ask is not None:
                inputs = LegacyStreamingInput(capabilities, request.version, channel.ask)
            elif channel.round is not None:
                inputs = LegacyBufferedInput(channel.round, capabilities, request.version, channel.send)
            else:
                inputs = NoInput()
            log_level = (request.session.log_level if request.session else None) or "debug"
        outbox = Outbox(channel.send, delivered)

        async def emit(method_name: str, notification_params: dict[str, Any]) -> None:
            await outbox.send(jsonrpc.notification(method_name, notification_params))

        info = CallInfo(
            request_id=request.request_id,
            method=method,
            protocol_version=request.version,
            client_capabilities=capabilities,
            meta=meta,
            session_id=request.session.session_id if request.session else None,
            principal=request.principal,
            scopes=request.scopes,
            claims=request.claims,
            task_id=task.task_id if task is not None else None,
            log_level=log_level,
            state=await self.app.lifespans.state(),
            sync_in_thread=self.sync_in_threads or task is not None,
            idempotency_key=call_key,
            deadline=channel.deadline,
        )
        hooks = Hooks(
            emit=emit,
            input_channel=inputs,
            is_cancelled=channel.is_cancelled,
            close_stream=channel.close_stream,
            notify_changed=self.app.changes.publish,
            start_task=_task_starter(modern) if start_task else None,
            checkpoints=channel.checkpoints or InlineCheckpoints(channel.deadline, skip_waits=self.skip_waits),
            credentials=self.credentials,
        )
        ctx = Context(info, hooks)
        try:
            return await body(ctx)
        except InputRequired as suspension:
            if modern is None or task is not None:
                raise
            payload = {"answers": modern.answers, "sent": outbox.reached, "k": ctx.idempotency_key}
            state = self.sealer.seal(method, params, payload, now, request.principal)
            count("CallsSuspended")
            return {"resultType": "input_required", "inputRequests": suspension.requests, "requestState": state}

    def _modern_state(self, method: str, params: dict[str, Any], request: RequestContext, now: float) -> Recorded:
        """The answers of earlier MRTR rounds (sealed in `requestState`) and of this one (`inputResponses`),
        and how many notifications the earlier rounds delivered."""
        if "requestState" not in params and "inputResponses" not in params:
            return _FIRST_ROUND
        answers: dict[str, Any] = {}
        sent, key = 0, ""
        if "requestState" in params:
            opened = self.sealer.open(params["requestState"], method, params, now, request.principal)
            answers.update(opened.get("answers", {}))
            sent = opened.get("sent", 0) if isinstance(opened.get("sent"), int) else 0
            key = opened.get("k", "") if isinstance(opened.get("k"), str) else ""
            count("CallsResumed")
        responses = params.get("inputResponses")
        if responses is not None and not isinstance(responses, dict):
            raise invalid_params("inputResponses must be an object")
        answers.update({k: v for k, v in (responses or {}).items() if isinstance(v, dict)})
        return Recorded(answers, delivered=sent, call_key=key)

    async def execute_task(self, record: TaskRecord, run: TaskRun) -> Outcome:
        """Run a task's `tools/call` once (the task runtime's `execute`), with its recorded answers."""
        name = record.params.get("name")
        tool = self.app.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return Outcome("failed", error=invalid_params(f"Unknown tool: {name}").to_error())
        request = RequestContext(
            era=record.wire,
            version=record.protocol_version or "",
            client_capabilities=record.client_capabilities,
            principal=record.owner.removeprefix("principal:") if record.owner.startswith("principal:") else None,
            scopes=frozenset(record.scopes) if record.scopes is not None else None,
            request_id=record.task_id,
            claims=record.claims,
        )
        channel = Channel(send=run.notify, is_cancelled=run.is_cancelled, checkpoints=run.checkpoints)
        try:
            result = await self._run_task(tool, record, request, channel)
        except InputRequired as suspension:
            return Outcome("input_required", input_requests=suspension.requests)
        except Sleeping as sleeping:
            return Outcome("sleeping", wake_at=sleeping.until)
        except StepInterrupted as interrupted:
            message = (
                f"Task failed: its step {interrupted.name!r} was interrupted (its run stopped while the step ran),"
                " and a step runs at most once"
            )
            return Outcome("failed", error={"code": INTERNAL_ERROR, "message": message})
        except CancelledByClient:
            return Outcome("cancelled")
        except MCPError as exc:
            return Outcome("failed", error=exc.to_error())
        except StorageUnavailable:
            raise  # not the tool's failure: the worker's message is retried, or the sweeper requeues the task
        except Exception:
            logger.exception("task %s failed", record.task_id)
            return Outcome("failed", error={"code": INTERNAL_ERROR, "message": "Internal error"})
        shaped = shaping.tool_result(result, request.version)
        if record.wire == "modern":
            shaped.setdefault("resultType", "complete")
        elif shaped.get("isError") is True:  # 2025-11-25: a tool error fails the task (tasks/result returns it)
            return Outcome("failed", result=shaped)
        return Outcome("completed", result=shaped)

    async def _run_task(
        self, tool: Tool, record: TaskRecord, request: RequestContext, channel: Channel
    ) -> dict[str, Any]:
        """The task's tool run, through the app's middlewares (a refusal's `ToolError` is the tool's error)."""

        async def run(params: dict[str, Any]) -> dict[str, Any]:
            arguments = params.get("arguments") or {}
            return await self.run(
                "tools/call", params, request, channel, lambda ctx: tool.run(arguments, ctx), task=record
            )

        if not self.app.middlewares:
            return await run(record.params)
        state = await self.app.lifespans.state()
        seen = request.seen("tools/call", record.params, state, record.session_id, record.task_id)
        try:
            return await through(self.app.middlewares, seen, lambda current: run(current.params))
        except ToolError as exc:
            return error_result(str(exc))


def _task_starter(inputs: ModernInput | None) -> Callable[[], Awaitable[None]]:
    async def start() -> None:
        raise TaskStarted(dict(inputs.answers) if inputs is not None else {})

    return start


def _modern_log_level(meta: dict[str, Any]) -> str | None:
    level = meta.get(META_LOG_LEVEL)
    if level is None:
        return None
    if level not in LOG_LEVELS:
        raise invalid_params(f"Invalid log level {level!r}")
    return str(level)
