"""Turn one JSON-RPC request into one response for either era; the single exception-to-wire boundary.

`Dispatcher.handle` never raises but to end a response early (`WaitInterrupted`, `CallSuspended`):
`MCPError` becomes its JSON-RPC error (with the HTTP status the 2026 transport pins for it), anything
unexpected becomes -32603 without internals, and a request the client cancelled yields no response.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from ..observe.invocation import note
from ..protocol import jsonrpc, revisions, shaping
from ..protocol.errors import (
    INTERNAL_ERROR,
    RESOURCE_NOT_FOUND_LEGACY,
    UNAVAILABLE,
    MCPError,
    insufficient_scope,
    invalid_params,
    method_not_found,
    modern_http_status,
)
from ..protocol.ids import new_session_id
from ..protocol.jsonrpc import Message
from ..protocol.limits import MAX_ARGUMENTS_BYTES, MAX_CLIENT_DATA_BYTES, MAX_SUBSCRIBED_URI_CHARS, MAX_SUBSCRIPTIONS
from ..protocol.names import LEGACY_TASKS_CAPABILITY, LOG_LEVELS, META_SERVER_INFO, TASKS_EXTENSION
from ..server.app import MCPApp
from ..server.context import Context
from ..server.errors import ToolError
from ..server.middleware import RequestInfo, through
from ..server.suspensions import CallSuspended, CancelledByClient, InputRequired, TaskStarted, WaitInterrupted
from ..server.tools import error_result
from ..storage.errors import LimitExceeded, StorageUnavailable
from ..storage.ports import CallStore, SessionStore
from ..storage.records import SessionRecord
from ..tasks.execution import SubmitFailed
from ..tasks.runtime import TaskRuntime
from .context import Channel, Handler, Reply, RequestContext
from .lists import Lists
from .params import check_sizes, kept, session_of, string_of, uri_of, within
from .runner import HandlerRunner
from .task_methods import (
    TaskMethods,
    declares_tasks,
    legacy_task_augmented,
    legacy_tasks_enabled,
    tasks_extension_required,
)

logger = logging.getLogger("lambda_mcp")

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
        runner: HandlerRunner,
        calls: CallStore,
        *,
        session_ttl: float = 3600.0,
        clock: Callable[[], float] = time.time,
        tasks: TaskRuntime | None = None,
    ) -> None:
        self.app = app
        self.sessions = sessions
        self.runner = runner
        self.session_ttl = session_ttl
        self.clock = clock
        self.task_methods = TaskMethods(tasks, app, calls) if tasks is not None else None
        lists = Lists(app, runner)
        shared: dict[str, Handler] = {
            "tools/list": lists.tools,
            "tools/call": self._tools_call,
            "resources/list": lists.resources,
            "resources/templates/list": lists.templates,
            "resources/read": self._resources_read,
            "prompts/list": lists.prompts,
            "prompts/get": self._prompts_get,
            "completion/complete": self._complete,
        }
        self._modern: dict[str, Handler] = {**shared, "server/discover": self._discover}
        self._legacy: dict[str, Handler] = {
            **shared,
            "ping": self._ping,
            "logging/setLevel": self._set_level,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
        }
        if self.task_methods is not None:
            self._modern.update(self.task_methods.modern_handlers())
            self._legacy.update(self.task_methods.legacy_handlers())

    # -- the boundary ---------------------------------------------------------------------
    async def handle(self, message: Message, request: RequestContext, channel: Channel) -> Reply:
        """The response message, its HTTP status and (for `initialize`) the session it opened.

        Raises only `WaitInterrupted` and `CallSuspended`: the transport ends the response early and
        the client resumes the request later (buffered legacy transport)."""
        assert message.id is not None and request.request_id == message.id
        opened: SessionRecord | None = None
        session_id = request.session.session_id if request.session is not None else None
        # initialize: the version it negotiates, noted by `_initialize` (not the newest legacy one it was read as)
        version = None if message.method == "initialize" else request.version
        note(mcp_method=message.method, protocol_version=version, session_id=session_id)
        try:
            result, opened = await self._served(message.method, message.params or {}, request, channel)
        except MCPError as exc:
            note(jsonrpc_error=exc.code)
            status = exc.http_status or (modern_http_status(exc.code) if request.era == "modern" else 200)
            return Reply(jsonrpc.error_message(message.id, exc.to_error()), status)
        except (WaitInterrupted, CallSuspended):
            raise  # the transport ends the response for the client to resume
        except (StorageUnavailable, SubmitFailed):  # after the AWS clients' own retries: the client retries
            logger.warning("storage or task queue unavailable serving %s", message.method, exc_info=True)
            note(jsonrpc_error=INTERNAL_ERROR)
            error = {"code": INTERNAL_ERROR, "message": UNAVAILABLE}
            return Reply(jsonrpc.error_message(message.id, error), 503)
        except (CancelledByClient, InputRequired):
            if channel.is_cancelled():
                return Reply(None)
            logger.exception("unexpected suspension in %s", message.method)
            return Reply(jsonrpc.error_message(message.id, {"code": INTERNAL_ERROR, "message": "Internal error"}))
        except Exception:
            logger.exception("internal error serving %s", message.method)
            note(jsonrpc_error=INTERNAL_ERROR)
            return Reply(jsonrpc.error_message(message.id, {"code": INTERNAL_ERROR, "message": "Internal error"}))
        if channel.is_cancelled():
            return Reply(None)
        return Reply(jsonrpc.result_message(message.id, result), 200, opened)

    async def _served(
        self, method: str, params: dict[str, Any], request: RequestContext, channel: Channel
    ) -> tuple[dict[str, Any], SessionRecord | None]:
        """The method's result (through the app's middlewares, if any) and the session `initialize` opened."""
        check_sizes(params, request)
        legacy_initialize = method == "initialize" and request.era == "legacy"
        if not self.app.middlewares:
            if legacy_initialize:
                return await self._initialize(params, request)
            return await self._route(method, params, request, channel), None
        opened: SessionRecord | None = None

        async def endpoint(current: RequestInfo) -> dict[str, Any]:
            nonlocal opened
            if legacy_initialize:
                result, opened = await self._initialize(current.params, request)
                return result
            return await self._route(method, current.params, request, channel)

        session = request.session.session_id if request.session is not None else None
        seen = request.seen(method, params, await self.app.lifespans.state(), session)
        try:
            return await through(self.app.middlewares, seen, endpoint), opened
        except ToolError as exc:  # a middleware's refusal, meant for the user
            if method == "tools/call":
                return shaping.tool_result(error_result(str(exc)), request.version), opened
            raise MCPError(INTERNAL_ERROR, str(exc)) from None

    async def _route(
        self, method: str, params: dict[str, Any], request: RequestContext, channel: Channel
    ) -> dict[str, Any]:
        table = self._modern if request.era == "modern" else self._legacy
        handler = table.get(method)
        needs = _NEEDS.get(method)
        if handler is None or (needs is not None and not self.app.serves(needs)):
            raise method_not_found(method)
        unmet = self.app.unmet_scopes(request.scopes, method, params)
        if unmet:  # the front refuses a POST naming it; this holds for re-runs and batch members too
            raise insufficient_scope(unmet)
        result = await handler(params, request, channel)
        if request.era == "modern":
            result.setdefault("resultType", "complete")
            result.setdefault("_meta", {})[META_SERVER_INFO] = self.app.server_info()
            if method in CACHEABLE and result["resultType"] == "complete":
                retried = "inputResponses" in params or "requestState" in params
                result.setdefault("ttlMs", 0 if retried else self.app.list_ttl_ms)
                result.setdefault("cacheScope", "public")
        return result

    # -- lifecycle ------------------------------------------------------------------------
    async def _discover(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(revisions.SUPPORTED),
            "capabilities": self.app.capabilities(),
        }
        if self.task_methods is not None:
            result["capabilities"].setdefault("extensions", {})[TASKS_EXTENSION] = {}
        if self.app.instructions:
            result["instructions"] = self.app.instructions
        return result

    async def _initialize(
        self, params: dict[str, Any], request: RequestContext
    ) -> tuple[dict[str, Any], SessionRecord]:
        capabilities = params.get("capabilities", {})
        client_info = params.get("clientInfo", {})
        if not isinstance(capabilities, dict) or not isinstance(client_info, dict):
            raise invalid_params("initialize needs capabilities and clientInfo objects")
        if not within([capabilities, client_info], MAX_CLIENT_DATA_BYTES, request):
            raise invalid_params(f"capabilities and clientInfo take more than {MAX_CLIENT_DATA_BYTES} bytes")
        version = revisions.negotiate_legacy(params.get("protocolVersion"))
        note(protocol_version=version)
        now = self.clock()
        record = SessionRecord(
            session_id=new_session_id(),
            protocol_version=version,
            client_capabilities=capabilities,
            client_info=client_info,
            created_at=now,
            expires_at=now + self.session_ttl,
            principal=request.principal,
            touched_at=now,
        )
        await self.sessions.create(record)
        server_capabilities = self.app.capabilities()
        if self.task_methods is not None and legacy_tasks_enabled("legacy", version):
            server_capabilities["tasks"] = LEGACY_TASKS_CAPABILITY
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": server_capabilities,
            "serverInfo": shaping.implementation(self.app.server_info(), version),
        }
        if self.app.instructions:
            result["instructions"] = self.app.instructions
        return result, record

    async def _ping(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        return {}

    async def _set_level(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise invalid_params(f"Invalid log level {level!r}; expected one of {', '.join(LOG_LEVELS)}")
        session = session_of(request)
        await kept(self.sessions.set_log_level(session.session_id, str(level)), None)
        session.log_level = str(level)  # later members of the same 2025-03-26 batch see it
        return {}

    async def _subscribe(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        uri = uri_of(params)
        if len(uri) > MAX_SUBSCRIBED_URI_CHARS:
            raise invalid_params(f"A session subscribes to URIs of at most {MAX_SUBSCRIBED_URI_CHARS} characters")
        if not await self.app.may_subscribe(uri, request.principal):
            raise invalid_params(f"Not allowed to subscribe to {uri}", {"uri": uri})
        try:
            await kept(
                self.sessions.subscribe(session_of(request).session_id, uri, True, limit=MAX_SUBSCRIPTIONS),
                "subscriptions",
            )
        except LimitExceeded:
            raise invalid_params(f"A session may hold at most {MAX_SUBSCRIPTIONS} subscriptions") from None
        return {}

    async def _unsubscribe(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        await kept(self.sessions.subscribe(session_of(request).session_id, uri_of(params), False), "subscriptions")
        return {}

    # -- calls that run user code ---------------------------------------------------------
    async def _tools_call(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        name = string_of(params, "name")
        tool = self.app.tools.get(name) or self.app.mounted_tool(name)
        if tool is None:
            raise invalid_params(f"Unknown tool: {name}")
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise invalid_params("tools/call arguments must be an object")
        if not within(arguments, MAX_ARGUMENTS_BYTES, request):  # they may be stored (a task, a suspended call)
            raise invalid_params(f"tools/call arguments take more than {MAX_ARGUMENTS_BYTES} bytes")
        tasks = self.task_methods
        as_task = False
        if request.era == "legacy":
            as_task = legacy_task_augmented(self.task_methods is not None, name, tool.task_support, params, request)
        elif tool.task_support != "forbidden":
            as_task = tasks is not None and declares_tasks(request)
            if tool.task_support == "required" and not as_task:
                raise tasks_extension_required(
                    f"Tool {name!r} runs only as a task: declare the {TASKS_EXTENSION} extension"
                )
        if as_task and tasks is not None and (request.era == "legacy" or not tool.defer_task):
            return await tasks.create("tools/call", params, request, {})
        try:
            result = await self.runner.run(
                "tools/call", params, request, channel, lambda ctx: tool.run(arguments, ctx), start_task=as_task
            )
        except TaskStarted as started:
            assert tasks is not None
            return await tasks.create("tools/call", params, request, started.answers)
        if result.get("resultType") == "input_required":
            return result
        return shaping.tool_result(result, request.version)

    async def _prompts_get(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        name = string_of(params, "name")
        prompt = self.app.prompts.get(name) or self.app.mounted_prompt(name)
        if prompt is None:
            raise invalid_params(f"Unknown prompt: {name}")
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
            raise invalid_params("prompts/get arguments must map names to strings")
        if not within(arguments, MAX_ARGUMENTS_BYTES, request):  # stored with a suspended call
            raise invalid_params(f"prompts/get arguments take more than {MAX_ARGUMENTS_BYTES} bytes")
        result = await self.runner.run("prompts/get", params, request, channel, lambda ctx: prompt.get(arguments, ctx))
        if result.get("resultType") == "input_required":
            return result
        return shaping.prompt_result(result, request.version)

    async def _resources_read(
        self, params: dict[str, Any], request: RequestContext, channel: Channel
    ) -> dict[str, Any]:
        uri = uri_of(params)
        found = self.app.resource_for(uri)
        if found is None:
            if request.era == "modern":
                raise invalid_params(f"Resource not found: {uri}", {"uri": uri})
            raise MCPError(RESOURCE_NOT_FOUND_LEGACY, f"Resource not found: {uri}", {"uri": uri})
        resource, variables = found

        async def read(ctx: Context) -> dict[str, Any]:
            return {"contents": await resource.read(uri, variables, ctx)}

        result = await self.runner.run("resources/read", params, request, channel, read)
        if "contents" in result:
            result["contents"] = shaping.contents(result["contents"], request.version)
            if request.era == "modern":  # the resource's own cache hints (a retried read is never cached)
                retried = "inputResponses" in params or "requestState" in params
                result["ttlMs"] = 0 if retried else resource.ttl_ms
                result["cacheScope"] = resource.cache_scope
        return result

    async def _complete(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
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
        completion = self.app.completion_handler
        if completion is not None:
            context = params.get("context") if isinstance(params.get("context"), dict) else {}

            async def complete(ctx: Context) -> dict[str, Any]:
                return {"values": await completion.complete(ref, argument, context or {}, ctx)}

            result = await self.runner.run("completion/complete", params, request, channel, complete)
            if result.get("resultType") == "input_required":
                raise invalid_params("A completion handler cannot ask the client for input")
            values = [str(v) for v in result["values"]]
        return {"completion": {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}}
