"""Turn one JSON-RPC request into one response for either era; the single exception-to-wire boundary.

`Dispatcher.handle` never raises: `MCPError` becomes its JSON-RPC error (with the HTTP status the
2026 transport pins for it), anything unexpected becomes -32603 without internals, and a request
the client cancelled yields no response at all.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..protocol import jsonrpc, shaping, versions
from ..protocol.errors import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND_LEGACY,
    MCPError,
    invalid_params,
    method_not_found,
    modern_http_status,
)
from ..protocol.jsonrpc import Message
from ..server.app import MCPApp
from ..server.context import (
    LOG_LEVELS,
    CallSuspended,
    CancelledByClient,
    Context,
    InputChannel,
    InputRequired,
    StartTask,
)
from ..server.prompts import Prompt
from ..server.resources import Resource
from ..server.tools import Tool
from ..storage.ports import SessionStore
from ..storage.records import SessionRecord
from ..tasks.model import TaskRecord
from ..tasks.runtime import EXTENSION, TaskRuntime
from .inputs import LegacyBufferedInput, LegacyStreamingInput, ModernInput, NoInput
from .pagination import page
from .request_state import StateSealer
from .scope import Handler, RequestScope, WaitInterrupted
from .tasks import LEGACY_CAPABILITY, TaskMethods, declares_tasks, tasks_extension_required

logger = logging.getLogger("lambda_mcp")

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"


CACHEABLE = frozenset(
    {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)
_NEEDS = {
    "tools/list": "tools",
    "tools/call": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resources",
    "resources/subscribe": "resources",
    "resources/unsubscribe": "resources",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
}


class Dispatcher:
    def __init__(
        self,
        app: MCPApp,
        sessions: SessionStore,
        sealer: StateSealer,
        *,
        session_ttl: float = 3600.0,
        clock: Callable[[], float] = time.time,
        tasks: TaskRuntime | None = None,
    ) -> None:
        self.app = app
        self.tasks = tasks
        self.sessions = sessions
        self.sealer = sealer
        self.session_ttl = session_ttl
        self.clock = clock
        shared: dict[str, Handler] = {
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "resources/list": self._resources_list,
            "resources/templates/list": self._templates_list,
            "resources/read": self._resources_read,
            "prompts/list": self._prompts_list,
            "prompts/get": self._prompts_get,
            "completion/complete": self._complete,
        }
        self._modern: dict[str, Handler] = {**shared, "server/discover": self._discover}
        self.task_methods: TaskMethods | None = None
        if tasks is not None:
            self.task_methods = TaskMethods(tasks, self)
            self._modern.update(self.task_methods.modern_handlers())
        self._legacy: dict[str, Handler] = {
            **shared,
            "initialize": self._initialize,
            "ping": self._ping,
            "logging/setLevel": self._set_level,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
        }
        if self.task_methods is not None:
            self._legacy.update(self.task_methods.legacy_handlers())

    # -- the boundary ---------------------------------------------------------------------
    async def handle(self, message: Message, scope: RequestScope) -> tuple[dict[str, Any] | None, int]:
        """The response message and its HTTP status; `(None, 200)` when the client cancelled.

        Raises only `WaitInterrupted` and `CallSuspended`: the transport ends the response early and
        the client resumes the request later (buffered legacy transport)."""
        assert message.id is not None
        scope.request_id = message.id
        try:
            result = await self._route(message, scope)
        except MCPError as exc:
            status = exc.http_status or (modern_http_status(exc.code) if scope.era == "modern" else 200)
            return jsonrpc.error_message(message.id, exc.to_error()), status
        except (WaitInterrupted, CallSuspended):
            raise  # the transport ends the response for the client to resume
        except (CancelledByClient, InputRequired):
            if scope.is_cancelled():
                return None, 200
            logger.exception("unexpected suspension in %s", message.method)
            return jsonrpc.error_message(message.id, {"code": INTERNAL_ERROR, "message": "Internal error"}), 200
        except Exception:
            logger.exception("internal error serving %s", message.method)
            return jsonrpc.error_message(message.id, {"code": INTERNAL_ERROR, "message": "Internal error"}), 200
        if scope.is_cancelled():
            return None, 200
        return jsonrpc.result_message(message.id, result), 200

    async def _route(self, message: Message, scope: RequestScope) -> dict[str, Any]:
        table = self._modern if scope.era == "modern" else self._legacy
        handler = table.get(message.method)
        needs = _NEEDS.get(message.method)
        if handler is None or (needs is not None and needs not in self.app.capabilities()):
            raise method_not_found(message.method)
        params = message.params or {}
        result = await handler(params, scope)
        if scope.era == "modern":
            result.setdefault("resultType", "complete")
            result.setdefault("_meta", {})[META_SERVER_INFO] = self.app.server_info()
            if message.method in CACHEABLE and result["resultType"] == "complete":
                retried = "inputResponses" in params or "requestState" in params
                result.setdefault("ttlMs", 0 if retried else self.app.list_ttl_ms)
                result.setdefault("cacheScope", "private" if message.method == "resources/read" else "public")
        return result

    # -- lifecycle ------------------------------------------------------------------------
    async def _discover(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(versions.SUPPORTED),
            "capabilities": self.app.capabilities(),
        }
        if self.tasks is not None:
            result["capabilities"]["extensions"] = {EXTENSION: {}}
        if self.app.instructions:
            result["instructions"] = self.app.instructions
        return result

    async def _initialize(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        capabilities = params.get("capabilities", {})
        client_info = params.get("clientInfo", {})
        if not isinstance(capabilities, dict) or not isinstance(client_info, dict):
            raise invalid_params("initialize needs capabilities and clientInfo objects")
        version = versions.negotiate_legacy(params.get("protocolVersion"))
        now = self.clock()
        record = SessionRecord(
            session_id=secrets.token_urlsafe(24),
            protocol_version=version,
            client_capabilities=capabilities,
            client_info=client_info,
            created_at=now,
            expires_at=now + self.session_ttl,
            principal=scope.principal,
            touched_at=now,
        )
        await self.sessions.create(record)
        scope.new_session_id = record.session_id
        scope.session = record
        scope.version = version
        capabilities = self.app.capabilities()
        if self.task_methods is not None and self.task_methods.legacy_enabled(scope):
            capabilities["tasks"] = LEGACY_CAPABILITY
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": capabilities,
            "serverInfo": shaping.implementation(self.app.server_info(), version),
        }
        if self.app.instructions:
            result["instructions"] = self.app.instructions
        return result

    async def _ping(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        return {}

    async def _set_level(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise invalid_params(f"Invalid log level {level!r}; expected one of {', '.join(LOG_LEVELS)}")
        session = self._session(scope)
        await self.sessions.set_log_level(session.session_id, str(level))
        session.log_level = str(level)
        return {}

    async def _subscribe(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        await self.sessions.subscribe(self._session(scope).session_id, _string(params, "uri"), True)
        return {}

    async def _unsubscribe(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        await self.sessions.subscribe(self._session(scope).session_id, _string(params, "uri"), False)
        return {}

    def _session(self, scope: RequestScope) -> SessionRecord:
        if scope.session is None:
            raise invalid_params("This method needs an initialized session")
        return scope.session

    # -- lists ----------------------------------------------------------------------------
    def _page(self, key: str, items: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
        chunk, next_cursor = page(items, params.get("cursor"), self.app.page_size)
        result: dict[str, Any] = {key: chunk}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    async def _tools_list(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        tools = [shaping.tool(t.definition, scope.version) for t in self.app.tools.values() if _visible(t, scope)]
        return self._page("tools", tools, params)

    async def _resources_list(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        items = [
            shaping.resource(r.definition, scope.version) for r in self.app.resources.values() if _visible(r, scope)
        ]
        return self._page("resources", items, params)

    async def _templates_list(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        items = [
            shaping.template(r.definition, scope.version) for r in self.app.templates.values() if _visible(r, scope)
        ]
        return self._page("resourceTemplates", items, params)

    async def _prompts_list(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        items = [shaping.prompt(p.definition, scope.version) for p in self.app.prompts.values() if _visible(p, scope)]
        return self._page("prompts", items, params)

    # -- calls that run user code ---------------------------------------------------------
    async def _tools_call(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        name = _string(params, "name")
        tool = self.app.tools.get(name)
        if tool is None:
            raise invalid_params(f"Unknown tool: {name}")
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise invalid_params("tools/call arguments must be an object")
        as_task = False
        if scope.era == "legacy":
            as_task = self._legacy_task_augmented(name, tool.task_support, params, scope)
        elif tool.task_support != "forbidden":
            as_task = self.tasks is not None and declares_tasks(scope)
            if tool.task_support == "required" and not as_task:
                raise tasks_extension_required(f"Tool {name!r} runs only as a task: declare the {EXTENSION} extension")
        if as_task and self.task_methods is not None and (scope.era == "legacy" or not tool.defer_task):
            return await self.task_methods.create("tools/call", params, scope, {})
        try:
            result = await self._run(
                "tools/call", params, scope, lambda ctx: tool.run(arguments, ctx), start_task=as_task
            )
        except _TaskStarted as started:
            assert self.task_methods is not None
            return await self.task_methods.create("tools/call", params, scope, started.answers)
        if result.get("resultType") == "input_required":
            return result
        return shaping.tool_result(result, scope.version)

    def _legacy_task_augmented(self, name: str, support: str, params: dict[str, Any], scope: RequestScope) -> bool:
        """2025-11-25 `params.task`: honoured only where the tasks capability was advertised (ignored
        elsewhere); -32601 for a task on a forbidden tool and for a required tool called without one."""
        enabled = self.task_methods is not None and self.task_methods.legacy_enabled(scope)
        augmented = enabled and isinstance(params.get("task"), dict)
        if augmented and support == "forbidden":
            raise MCPError(METHOD_NOT_FOUND, f"Tool {name!r} does not support task-augmented calls")
        if support == "required" and not augmented:
            raise MCPError(METHOD_NOT_FOUND, f"Tool {name!r} must be called as a task (params.task)")
        return augmented

    async def _prompts_get(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        name = _string(params, "name")
        prompt = self.app.prompts.get(name)
        if prompt is None:
            raise invalid_params(f"Unknown prompt: {name}")
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
            raise invalid_params("prompts/get arguments must map names to strings")
        result = await self._run("prompts/get", params, scope, lambda ctx: prompt.get(arguments, ctx))
        if result.get("resultType") == "input_required":
            return result
        return shaping.prompt_result(result, scope.version)

    async def _resources_read(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        uri = _string(params, "uri")
        found = self.app.resource_for(uri)
        if found is None:
            if scope.era == "modern":
                raise invalid_params(f"Resource not found: {uri}", {"uri": uri})
            raise MCPError(RESOURCE_NOT_FOUND_LEGACY, f"Resource not found: {uri}", {"uri": uri})
        resource, variables = found

        async def read(ctx: Context) -> dict[str, Any]:
            return {"contents": await resource.read(uri, variables, ctx)}

        result = await self._run("resources/read", params, scope, read)
        if "contents" in result:
            result["contents"] = shaping.contents(result["contents"], scope.version)
        return result

    async def _complete(self, params: dict[str, Any], scope: RequestScope) -> dict[str, Any]:
        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            raise invalid_params("completion/complete needs ref and argument {name, value}")
        if ref.get("type") == "ref/prompt":
            if ref.get("name") not in self.app.prompts:
                raise invalid_params(f"Unknown prompt: {ref.get('name')}")
        elif ref.get("type") != "ref/resource":
            raise invalid_params("ref.type must be ref/prompt or ref/resource")
        values: list[str] = []
        handler = self.app.completion_handler
        if handler is not None:
            context = params.get("context") if isinstance(params.get("context"), dict) else {}
            produced = handler(ref, argument, context or {})
            values = list(await produced if not isinstance(produced, list) else produced)
        return {"completion": {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}}

    async def _run(
        self,
        method: str,
        params: dict[str, Any],
        scope: RequestScope,
        body: Callable[[Context], Awaitable[dict[str, Any]]],
        *,
        start_task: bool = False,
        task: TaskRecord | None = None,
    ) -> dict[str, Any]:
        """Run a handler with a `Context`; on the modern wire a suspension becomes an InputRequiredResult.

        `start_task`: `ctx.start_task()` ends the inline run (`_TaskStarted` carries the answers so far).
        `task`: the run is a task's (answers come from its record; a suspension propagates).
        """
        raw_meta = params.get("_meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        channel: InputChannel
        modern_input: ModernInput | None = None
        now = self.clock()
        if task is not None:
            channel = modern_input = ModernInput(dict(task.input_responses), scope.client_capabilities)
            log_level = task.log_level
        elif scope.era == "modern":
            answers: dict[str, Any] = {}
            if "requestState" in params:
                answers.update(
                    self.sealer.open(params["requestState"], method, params, now, scope.principal).get("answers", {})
                )
            responses = params.get("inputResponses")
            if responses is not None and not isinstance(responses, dict):
                raise invalid_params("inputResponses must be an object")
            answers.update({k: v for k, v in (responses or {}).items() if isinstance(v, dict)})
            channel = modern_input = ModernInput(answers, scope.client_capabilities)
            log_level = _modern_log_level(meta)
        else:
            if scope.server_request is not None:
                channel = LegacyStreamingInput(scope.client_capabilities, scope.server_request)
            elif scope.resumption is not None:
                channel = LegacyBufferedInput(scope.resumption, scope.client_capabilities, scope.send)
            else:
                channel = NoInput()
            log_level = (scope.session.log_level if scope.session else None) or "debug"

        async def emit(method_name: str, notification_params: dict[str, Any]) -> None:
            await scope.send(jsonrpc.notification(method_name, notification_params))

        async def notify_changed(kind: str, uri: str | None) -> None:
            await self.app.changes.publish(kind, uri)

        ctx = Context(
            request_id=scope.request_id,
            method=method,
            protocol_version=scope.version,
            client_capabilities=scope.client_capabilities,
            meta=meta,
            session_id=scope.session.session_id if scope.session else None,
            principal=scope.principal,
            scopes=scope.scopes,
            emit=emit,
            input_channel=channel,
            log_level=log_level,
            is_cancelled=scope.is_cancelled,
            close_stream=scope.close_stream,
            notify_changed=notify_changed,
            start_task=_raise_task_started(modern_input) if start_task else None,
            task_id=task.task_id if task is not None else None,
        )
        try:
            return await body(ctx)
        except InputRequired as suspension:
            if modern_input is None or task is not None:
                raise
            state = self.sealer.seal(method, params, {"answers": modern_input.answers}, now, scope.principal)
            return {"resultType": "input_required", "inputRequests": suspension.requests, "requestState": state}


class _TaskStarted(StartTask):
    def __init__(self, answers: dict[str, Any]) -> None:
        super().__init__("task started")
        self.answers = answers


def _raise_task_started(channel: ModernInput | None) -> Callable[[], Awaitable[None]]:
    async def start() -> None:
        raise _TaskStarted(dict(channel.answers) if channel is not None else {})

    return start


def _visible(item: Tool | Resource | Prompt, scope: RequestScope) -> bool:
    """Lists show what the caller's scopes allow (everything when scopes are not enforced)."""
    return scope.scopes is None or item.scopes <= scope.scopes


def _string(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise invalid_params(f'"{key}" must be a string')
    return value


def _modern_log_level(meta: dict[str, Any]) -> str | None:
    level = meta.get(META_LOG_LEVEL)
    if level is None:
        return None
    if level not in LOG_LEVELS:
        raise invalid_params(f"Invalid log level {level!r}")
    return str(level)
