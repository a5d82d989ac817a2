"""The legacy eras (2025-11-25, 2025-06-18, 2025-03-26): an `initialize` handshake and an
`MCP-Session-Id`, responses as JSON or SSE, the server's own requests (an elicitation) arriving on a
call's stream and answered by POSTing a JSON-RPC response, a stream the server closes early resumed
with a GET and `Last-Event-ID`, and the session DELETEd at the end."""

from __future__ import annotations

import time
from typing import Any

from ..protocol.revisions import (
    LEGACY_VERSIONS,
    has_elicitation,
    has_legacy_tasks,
    has_url_elicitation,
    names_form_mode,
)
from .answers import Answerer, Unanswerable
from .failures import RemoteFailure, RpcError
from .session import Conversation, Notify, client_info
from .tasks import run_legacy, task_support
from .wire import Reply, Wire

MAX_RESUMPTIONS = 1000


def capabilities(version: str) -> dict[str, Any]:
    """What this client can do, as the revision spells it: form (and URL) elicitation."""
    if not has_elicitation(version):
        return {}
    if not names_form_mode(version):
        return {"elicitation": {}}
    return {"elicitation": {"form": {}, **({"url": {}} if has_url_elicitation(version) else {})}}


class LegacySession(Conversation):
    def __init__(
        self, wire: Wire, answerer: Answerer, notify: Notify, version: str, log_level: str | None = None
    ) -> None:
        super().__init__(answerer, notify)
        self.wire = wire
        self.version = version
        self.session_id: str | None = None
        self._started = False
        self._last_event_id: str | None = None
        self._retry_ms = 1000
        params = {"protocolVersion": version, "capabilities": capabilities(version), "clientInfo": client_info()}
        started = self.request("initialize", params)
        try:
            offered = started.get("protocolVersion")
            if offered not in LEGACY_VERSIONS:
                raise RemoteFailure(f"the server offered protocol version {offered!r}; this client speaks {version}")
            self.version = str(offered)
            self._started = True
            self.wire.messages("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, self._headers())
            offered_capabilities = started.get("capabilities")
            if log_level is not None and isinstance(offered_capabilities, dict) and "logging" in offered_capabilities:
                self.request("logging/setLevel", {"level": log_level})
        except BaseException:
            self.close()
            raise

    def _headers(self) -> dict[str, str]:
        headers = {"mcp-protocol-version": self.version} if self._started else {}
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
        return headers

    def close(self) -> None:
        """End the session (a server that keeps none answers 405, which is fine)."""
        try:
            if self.session_id is not None:
                with self.wire.exchange("DELETE", None, self._headers()):
                    pass
        except RemoteFailure:
            pass
        finally:
            self.session_id = None
            self.wire.close()

    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        """`tools/call`; a tool that runs only as a task (2025-11-25) is called as one and waited for."""
        try:
            return self.request("tools/call", params)
        except RpcError as exc:
            if exc.code not in (-32601, -32600) or not has_legacy_tasks(self.version):
                raise
            if task_support(self, str(params.get("name"))) != "required":
                raise
        return run_legacy(self, params)

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = self.next_id()
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self._last_event_id = None
        with self.wire.exchange("POST", body, self._headers()) as reply:
            if method == "initialize":
                self.session_id = reply.headers.get("mcp-session-id")
            response = self._read(reply, request_id)
        for _ in range(MAX_RESUMPTIONS):
            if response is not None:
                return self.outcome(response)
            if self._last_event_id is None:
                raise RemoteFailure(f"{self.wire.url} ended the response to {method} without answering it")
            time.sleep(self._retry_ms / 1000)
            resume = {**self._headers(), "accept": "text/event-stream", "last-event-id": self._last_event_id}
            with self.wire.exchange("GET", None, resume) as reply:
                response = self._read(reply, request_id)
        raise RemoteFailure(f"no answer to {method} after {MAX_RESUMPTIONS} resumptions of its stream")

    def _read(self, reply: Reply, request_id: int) -> dict[str, Any] | None:
        """Read a response's events until the one answering `request_id`, answering the server's requests
        and showing its notifications on the way; None if the stream ends first."""
        for event in reply.events:
            if event.event_id:
                self._last_event_id = event.event_id
            if event.retry_ms is not None:
                self._retry_ms = event.retry_ms
            message = event.message
            if message is None:
                continue
            if "method" in message:
                if "id" in message:
                    self._answer(message)
                else:
                    self.notify(message)
            elif message.get("id") == request_id and ("result" in message or "error" in message):
                return message
        return None

    def _answer(self, request: dict[str, Any]) -> None:
        params = request.get("params")
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        try:
            reply["result"] = self.answerer.answer(str(request["method"]), params if isinstance(params, dict) else {})
        except Unanswerable as exc:
            reply["error"] = exc.to_error()
        self.wire.messages("POST", reply, self._headers())
