"""The 2026-07-28 era: every request stands alone, with the version and client capabilities in
`params._meta` and the routing headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
`Mcp-Param-*`); a result asking for input (`resultType: "input_required"`) is answered by retrying the
request with `inputResponses` and the echoed `requestState` (MRTR)."""

from __future__ import annotations

from typing import Any

from ..protocol.errors import HEADER_MISMATCH
from ..protocol.names import META_CAPABILITIES, META_LOG_LEVEL, META_VERSION, TASKS_EXTENSION
from ..protocol.request_headers import client_headers
from ..protocol.revisions import MODERN
from .answers import Answerer, Unanswerable
from .failures import ERROR_RESULT, RemoteFailure, RpcError
from .session import Conversation, Notify, client_info
from .tasks import follow
from .wire import Wire

META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}, "extensions": {TASKS_EXTENSION: {}}}
MAX_ROUNDS = 50


class ModernSession(Conversation):
    def __init__(
        self, wire: Wire, answerer: Answerer, notify: Notify, version: str = MODERN, log_level: str | None = None
    ) -> None:
        super().__init__(answerer, notify)
        self.wire = wire
        self.version = version
        self.log_level = log_level
        """Sent in every request's `_meta`: the server's log messages at this level and above come back."""
        self._header_params: dict[str, dict[str, str]] | None = None
        """Tool name -> its `Mcp-Param-*` headers (from `x-mcp-header`), read once a server asks for them."""

    def close(self) -> None:
        self.wire.close()

    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", params)

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        current = params
        for _ in range(MAX_ROUNDS):
            result = self._routed(method, current)
            if result.get("resultType") == "task":
                return follow(self, result)
            if result.get("resultType") != "input_required":
                return result
            current = {**params, **self._inputs(result)}
        raise RemoteFailure(f"the server asked for input {MAX_ROUNDS} times over; giving up", ERROR_RESULT)

    def answer_all(self, asked: dict[str, Any]) -> dict[str, Any]:
        """The answers to `inputRequests` (MRTR shape: key -> {method, params}), keyed the same."""
        responses: dict[str, Any] = {}
        for key, wanted in asked.items():
            method = str(wanted.get("method")) if isinstance(wanted, dict) else "?"
            params = wanted.get("params") if isinstance(wanted, dict) else None
            try:
                responses[key] = self.answerer.answer(method, params if isinstance(params, dict) else {})
            except Unanswerable as exc:
                raise RemoteFailure(f"the server asked for {method}: {exc.message}", ERROR_RESULT) from None
        return responses

    def _inputs(self, result: dict[str, Any]) -> dict[str, Any]:
        """The `inputResponses` (and echoed `requestState`) that answer an InputRequiredResult."""
        retry: dict[str, Any] = {}
        asked = result.get("inputRequests")
        if isinstance(asked, dict) and asked:
            retry["inputResponses"] = self.answer_all(asked)
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
        return retry

    def _routed(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request; when a tool routes on an argument (`x-mcp-header`) and the server says a header
        is missing, the tool's `Mcp-Param-*` headers are looked up and the request is sent once more."""
        try:
            return self._once(method, params)
        except RpcError as exc:
            if exc.code != HEADER_MISMATCH or method != "tools/call" or self._header_params is not None:
                raise
        self._header_params = self._tool_headers()
        return self._once(method, params)

    def _once(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        meta = {**(params.get("_meta") or {}), META_VERSION: self.version, META_CAPABILITIES: CAPABILITIES}
        meta[META_CLIENT_INFO] = client_info()
        if self.log_level is not None:
            meta[META_LOG_LEVEL] = self.log_level
        request_id = self.next_id()
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}
        tool = params.get("name") if method == "tools/call" else None
        routing = (self._header_params or {}).get(tool) if isinstance(tool, str) else None
        headers = {"mcp-protocol-version": self.version, **client_headers(method, params, routing)}
        with self.wire.exchange("POST", body, headers) as reply:
            for event in reply.events:
                message = event.message
                if message is None:
                    continue
                if "method" in message:
                    if "id" not in message:
                        self.notify(message)
                    continue  # a 2026 server sends no requests on a stream; nothing to answer
                if message.get("id") == request_id:
                    return self.outcome(message)
        raise RemoteFailure(f"{self.wire.url} ended the response to {method} without answering it")

    def _tool_headers(self) -> dict[str, dict[str, str]]:
        found: dict[str, dict[str, str]] = {}
        cursor: str | None = None
        for _ in range(1000):
            page = self._once("tools/list", {"cursor": cursor} if cursor else {})
            for tool in page.get("tools") or []:
                properties = (tool.get("inputSchema") or {}).get("properties") or {}
                found[tool.get("name")] = {
                    prop["x-mcp-header"].lower(): argument
                    for argument, prop in properties.items()
                    if isinstance(prop, dict) and isinstance(prop.get("x-mcp-header"), str)
                }
            cursor = page.get("nextCursor")
            if not cursor:
                break
        return found
