"""`Client`: drive an app in process through the kit's real HTTP endpoint and dispatch, on either era.

The 2026-07-28 wire (the default) sends stateless requests and answers `InputRequiredResult` rounds
with the handlers; a legacy revision opens a session and answers the server's requests on each call's
SSE stream. Tasks run in this process, as under `lambda-mcp dev`. Given a principal, scopes or claims, the
kit authenticates every request as that caller and enforces scopes as under auth `jwt`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import secrets
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Literal

from ..config import Settings
from ..kit import Kit, build_kit
from ..protocol import revisions
from ..protocol.names import TASKS_EXTENSION
from ..protocol.request_headers import client_headers
from ..server.app import MCPApp
from ..server.credentials import SeededCredentials
from ._answers import Answers, ElicitationHandler, ProgressHandler, SamplingHandler, hinted, missing_handler
from ._asgi import Response, exchange, require_asyncio
from ._caller import caller, present, settings_for
from ._raising import Catcher
from .results import RequestFailed, ToolResult

MODERN = revisions.MODERN
LEGACY = revisions.LEGACY
"""Newest first, as everywhere in the kit."""
MAX_ROUNDS = 16
"""2026 input rounds one call may take before the client gives up (a handler that asks forever)."""


class Client:
    """A client of `app` in this process: `async with Client(app) as client: await client.call_tool(...)`.

    - `protocol_version`: `2026-07-28` (stateless) or a legacy revision (a session is opened).
    - `elicitation_handler(message, schema) -> dict`: the `ElicitResult` (`{"action": ...}`), or the
      content of an accepted form. `sampling_handler(messages, params) -> str | dict`: the model's
      text, or a `CreateMessageResult`. `roots`: the client's root URIs. Each declares its capability;
      a handler may be sync or async, and an exception it raises goes to the server as an error (legacy
      eras; 2026 has no error answers: it is raised in the test). A call that failed for want of one
      says which argument to pass.
    - `tasks`: declare task support (the 2026 extension; the 2025-11-25 capability).
    - the app's lifespan is entered for the block (as a server's start-up would).
    - `principal`, `scopes`, `claims`: the caller every request comes from, its scopes enforced as under
      auth `jwt` (what it lacks a scope for is absent from the lists, and naming it fails with a 403
      `RequestFailed`), its token claims what handlers see as `ctx.claims` (e.g. `{"groups": [...]}`).
      `scopes` or `claims` alone call as `"test-client"`; `principal` or `claims` alone hold no scopes.
      Without any, auth is `none`: nothing is enforced and `ctx.claims` is empty.
    - `raise_exceptions`: a handler's unexpected exception (the client would see "failed unexpectedly" or
      an internal error) is raised in the test instead, with its own type and traceback; a `ToolError`,
      or a client's refusal the tool does not catch (`ClientError`), is still an error result.
    - `call_tool(..., progress_handler=fn)`: `fn(progress, total, message)` gets the call's progress.
    - `real_waits`: keep the waits of `ctx.sleep`; by default they are skipped (a sleeping task runs again
      at once, as under `lambda-mcp dev`).
    - `connections={"github": "token"}`, `upstream_token`: what `ctx.connection(name)` and
      `ctx.upstream_token()` return (no browser, no provider); an unseeded one is `CredentialsUnavailable`.
    """

    def __init__(
        self,
        app: MCPApp,
        *,
        protocol_version: str = MODERN,
        elicitation_handler: ElicitationHandler | None = None,
        sampling_handler: SamplingHandler | None = None,
        roots: Sequence[str | dict[str, Any]] | None = None,
        tasks: bool = True,
        capabilities: dict[str, Any] | None = None,
        settings: Settings | None = None,
        principal: str | None = None,
        scopes: Sequence[str] | None = None,
        claims: Mapping[str, Any] | None = None,
        raise_exceptions: bool = False,
        real_waits: bool = False,
        connections: Mapping[str, str] | None = None,
        upstream_token: str | None = None,
    ) -> None:
        if protocol_version not in revisions.SUPPORTED:
            raise ValueError(f"unknown protocol version {protocol_version!r}; use {MODERN} or one of {LEGACY}")
        self.app = app
        self.protocol_version = protocol_version
        self.identity = caller(principal, scopes, claims)
        settings = settings_for(settings or Settings(state_key=secrets.token_bytes(32)), self.identity)
        settings = dataclasses.replace(settings, skip_waits=not real_waits)
        self.kit: Kit = build_kit(app, settings, streaming=True, local=True)
        if connections is not None or upstream_token is not None:  # the user's tokens at other services
            self.kit.dispatcher.runner.credentials = SeededCredentials(connections or {}, upstream_token)
        if self.identity is not None:
            present(self.kit, self.identity)
        self.asgi = self.kit.asgi()
        self._catcher = Catcher() if raise_exceptions else None
        self.answers = Answers(elicitation_handler, sampling_handler, roots)
        self.capabilities = {**self._declared(tasks), **(capabilities or {})}
        self.notifications: list[dict[str, Any]] = []
        """Every notification the server sent on a request's stream (logs, progress, ...), in order."""
        self.session_id: str | None = None
        self.server: dict[str, Any] = {}
        """The `initialize` (legacy) or `server/discover` (2026) result."""
        self._ids = 0

    @property
    def modern(self) -> bool:
        return revisions.is_modern(self.protocol_version)

    @property
    def logs(self) -> list[Any]:
        """The `data` of every `notifications/message` the server sent."""
        return [n["params"]["data"] for n in self.notifications if n.get("method") == "notifications/message"]

    def _declared(self, tasks: bool) -> dict[str, Any]:
        declared: dict[str, Any] = {}
        if self.answers.on_elicit is not None:
            declared["elicitation"] = {"form": {}} if revisions.names_form_mode(self.protocol_version) else {}
        if self.answers.on_sample is not None:
            declared["sampling"] = {}
        if self.answers.roots is not None:
            declared["roots"] = {} if self.modern else {"listChanged": False}
        if tasks and self.modern:
            declared["extensions"] = {TASKS_EXTENSION: {}}
        elif tasks and revisions.has_legacy_tasks(self.protocol_version):
            declared["tasks"] = {"requests": {"elicitation": {"create": {}}, "sampling": {"createMessage": {}}}}
        return declared

    # -- lifecycle ------------------------------------------------------------------------
    async def __aenter__(self) -> Client:
        require_asyncio()
        if self._catcher is not None:
            self._catcher.install()
        await self.app.lifespans.start()
        if self.modern:
            self.server = await self.request("server/discover")
        else:
            params = {
                "protocolVersion": self.protocol_version,
                "capabilities": self.capabilities,
                "clientInfo": {"name": "lambda-mcp-testing", "version": "1"},
            }
            message = {"jsonrpc": "2.0", "id": self._next_id(), "method": "initialize", "params": params}
            response = await self._post(message)
            self.server = _result(response)
            self.session_id = response.headers.get("mcp-session-id")
            await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        try:
            if self.session_id is not None:
                await exchange(self.asgi, "DELETE", self._headers(None, {}), b"")
            if self.kit.task_runtime is not None:
                close = getattr(self.kit.task_runtime.executor, "close", None)
                if close is not None:
                    await close()
            await self.app.lifespans.stop()
        finally:
            if self._catcher is not None:
                self._catcher.remove()

    # -- tools, resources, prompts --------------------------------------------------------
    async def list_tools(self) -> list[dict[str, Any]]:
        return await self._list("tools/list", "tools")

    async def list_resources(self) -> list[dict[str, Any]]:
        return await self._list("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        return await self._list("resources/templates/list", "resourceTemplates")

    async def list_prompts(self) -> list[dict[str, Any]]:
        return await self._list("prompts/list", "prompts")

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        task: bool | Literal["auto"] = "auto",
        progress_handler: ProgressHandler | None = None,
    ) -> ToolResult:
        """The tool's result. `task=True` runs it as a task and waits for its result; a 2026 server that
        answers a task anyway (a task-capable tool) is polled the same way. `"auto"` (the default) is
        `True` for a tool declared `task_support="required"` on 2025-11-25, which accepts it only as a task.

        `progress_handler(progress, total, message)` (sync or async): the call sends a progress token, and
        each `notifications/progress` for it is handed to the handler as it arrives (a 2025-11-25 task's
        through `tasks/result`; a 2026 task has no progress channel, so there it is never called)."""
        if task == "auto":
            tool = self.app.tools.get(name)
            task = (
                tool is not None
                and tool.task_support == "required"
                and revisions.has_legacy_tasks(self.protocol_version)
            )
        meta: dict[str, Any] = {}
        if progress_handler is not None:
            meta["progressToken"] = token = f"progress-{self._next_id()}"
            self.answers.progress[token] = progress_handler
        try:
            if task:
                return await self.task_result((await self._start_task(name, arguments, None, meta))["taskId"])
            raw = await self.request("tools/call", {"name": name, "arguments": arguments or {}, **_meta(meta)})
            if raw.get("resultType") == "task":
                return await self.task_result(raw["taskId"])
            return hinted(ToolResult.of(raw), self.capabilities)
        finally:
            self.answers.progress.pop(meta.get("progressToken", ""), None)

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        contents: list[dict[str, Any]] = (await self.request("resources/read", {"uri": uri}))["contents"]
        return contents

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments or {}}
        prompt: dict[str, Any] = await self.request("prompts/get", params)
        return prompt

    async def complete(self, ref: dict[str, Any], argument: str, value: str) -> list[str]:
        params = {"ref": ref, "argument": {"name": argument, "value": value}}
        values: list[str] = (await self.request("completion/complete", params))["completion"]["values"]
        return values

    # -- tasks ----------------------------------------------------------------------------
    async def start_task(
        self, name: str, arguments: dict[str, Any] | None = None, *, ttl_ms: int | None = None
    ) -> dict[str, Any]:
        """Call the tool as a task; returns the task (`taskId`, `status`, ...) at once."""
        return await self._start_task(name, arguments, ttl_ms, {})

    async def _start_task(
        self, name: str, arguments: dict[str, Any] | None, ttl_ms: int | None, meta: dict[str, Any]
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}, **_meta(meta)}
        if not self.modern:
            params["task"] = {"ttl": ttl_ms} if ttl_ms is not None else {}
        created = await self.request("tools/call", params)
        task: dict[str, Any] = created.get("task", created)
        if "taskId" not in task:
            raise RequestFailed({"code": 0, "message": f"the server ran {name!r} without a task: {created}"})
        return task

    async def get_task(self, task_id: str) -> dict[str, Any]:
        task: dict[str, Any] = await self.request("tasks/get", {"taskId": task_id})
        return task

    async def cancel_task(self, task_id: str) -> None:
        await self.request("tasks/cancel", {"taskId": task_id})

    async def task_result(self, task_id: str, *, timeout: float = 30.0) -> ToolResult:
        """Wait for the task's result, answering its input requests with the handlers (2026: by polling
        `tasks/get` and answering with `tasks/update`; 2025-11-25: `tasks/result`, which streams them)."""
        if not self.modern:
            return hinted(ToolResult.of(await self.request("tasks/result", {"taskId": task_id})), self.capabilities)
        async with asyncio.timeout(timeout):
            while True:
                task = await self.get_task(task_id)
                status = task.get("status")
                if status == "completed":
                    return ToolResult.of(task.get("result") or {})
                if status == "failed" and "result" in task:
                    return ToolResult.of(task["result"])
                if status in ("failed", "cancelled"):
                    raise RequestFailed(task.get("error") or {"code": 0, "message": f"task {status}"})
                if status == "input_required":
                    answers = await self._answer_all(task.get("inputRequests") or {})
                    await self.request("tasks/update", {"taskId": task_id, "inputResponses": answers})
                await asyncio.sleep(min(0.05, task.get("pollIntervalMs", 50) / 1000))

    # -- requests -------------------------------------------------------------------------
    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Any request's result, after answering what the server asks on the way; `RequestFailed` for a
        JSON-RPC error."""
        params = dict(params or {})
        for _ in range(MAX_ROUNDS):
            message = {"jsonrpc": "2.0", "id": self._next_id(), "method": method, "params": self._with_meta(params)}
            result = self._checked(method, params, await self._post(message))
            if result.get("resultType") != "input_required":
                return result
            params["inputResponses"] = await self._answer_all(result.get("inputRequests") or {})
            params["requestState"] = result.get("requestState")
        raise RequestFailed({"code": 0, "message": f"{method} still needed input after {MAX_ROUNDS} rounds"})

    def _checked(self, method: str, params: dict[str, Any], response: Response) -> dict[str, Any]:
        """The response's result, after raising what the kit caught serving it (`raise_exceptions`); a 403
        names the scopes the operation needs."""
        if self._catcher is not None:
            self._catcher.raise_caught()
        try:
            return _result(response)
        except RequestFailed as failed:
            missing = missing_handler(failed, self.capabilities)
            if missing is not None:
                raise missing from None
            if response.status != 403 or self.identity is None:
                raise
            needed = self.app.scopes_for(method, params) | frozenset(self.kit.settings.auth_scopes)
            held = ", ".join(sorted(self.identity.scopes or ())) or "none"
            detail = f"{failed.message} ({method} needs scopes {', '.join(sorted(needed))}; the client has {held})"
            raise RequestFailed({"code": failed.code, "message": detail, "data": failed.data}, status=403) from None

    def _with_meta(self, params: dict[str, Any]) -> dict[str, Any]:
        if not self.modern:
            return params
        meta = {
            **(params.get("_meta") or {}),
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
        }
        return {**params, "_meta": meta}

    async def _list(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = await self.request(method, {"cursor": cursor} if cursor else {})
            items.extend(page[key])
            cursor = page.get("nextCursor")
            if not cursor:
                return items

    async def _post(self, message: dict[str, Any]) -> Response:
        body = json.dumps(message).encode()
        method = message.get("method")
        headers = self._headers(method if isinstance(method, str) else None, message.get("params") or {})
        if self._catcher is None:
            return await exchange(self.asgi, "POST", headers, body, self._on_message)
        with self._catcher.serving():
            return await exchange(self.asgi, "POST", headers, body, self._on_message)

    def _headers(self, method: str | None, params: dict[str, Any]) -> dict[str, str]:
        headers = {
            "host": "127.0.0.1:8000",
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        if self.session_id is not None or self.modern or method != "initialize":
            headers["mcp-protocol-version"] = self.protocol_version
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        if self.modern and method is not None:
            tool = self.app.tools.get(params.get("name", "")) if method == "tools/call" else None
            headers.update(client_headers(method, params, tool.header_params if tool is not None else None))
        return headers

    def _next_id(self) -> int:
        self._ids += 1
        return self._ids

    # -- what the server asks ---------------------------------------------------------------
    async def _on_message(self, message: dict[str, Any]) -> None:
        """A message on a request's stream: keep notifications (progress goes to its call's handler), answer
        the server's requests (legacy)."""
        if "method" not in message:
            return
        if "id" not in message:
            self.notifications.append(message)
            await self.answers.notified(message)
            return
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = await self.answers.answer(message)
        except Exception as exc:
            reply["error"] = {"code": -32603, "message": str(exc)}
        await self._post(reply)

    async def _answer_all(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        return {key: await self.answers.answer(request) for key, request in requests.items()}


def _meta(meta: dict[str, Any]) -> dict[str, Any]:
    return {"_meta": meta} if meta else {}


def _result(response: Response) -> dict[str, Any]:
    final = next((m for m in reversed(response.messages) if "result" in m or "error" in m), None)
    if final is None:
        text = response.body.decode(errors="replace")[:500]
        raise RequestFailed({"code": response.status, "message": text}, status=response.status)
    if "error" in final:
        raise RequestFailed(final["error"], status=response.status)
    result: dict[str, Any] = final["result"]
    return result
