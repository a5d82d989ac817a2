"""A 2025-11-25 client over real HTTP for integration tests: sessions, resumable SSE responses, schema checks."""

from __future__ import annotations

import itertools
import json
from typing import Any

import httpx

from .recorder import Recorder

_ids = itertools.count(1)
_INFO = {"name": "legacy-test-client", "version": "1"}


class LegacyClient:
    """A 2025-11-25 session over HTTP whose every exchange is schema-checked."""

    def __init__(
        self, url: str, recorder: Recorder, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None
    ) -> None:
        self.url = url
        self.recorder = recorder
        self.http = httpx.Client(timeout=30)
        self.version = version
        params = {"protocolVersion": version, "capabilities": capabilities or {}, "clientInfo": _INFO}
        started = self.post("initialize", params)
        self.capabilities: dict[str, Any] = started[-1]["result"]["capabilities"]
        self.session_id = self.last.headers["mcp-session-id"]
        self.last_event_id: str | None = None

    def headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        if hasattr(self, "session_id"):
            headers |= {"mcp-session-id": self.session_id, "mcp-protocol-version": self.version}
        return headers

    def _record(self, request_headers: dict[str, str], body: bytes) -> list[dict[str, Any]]:
        response = self.last
        lowered = {k.lower(): v for k, v in request_headers.items()} | {"host": response.request.headers["host"]}
        response_headers = {k.lower(): v for k, v in response.headers.items()}
        messages = self.recorder.exchange(lowered, body, response.status_code, response_headers, response.content)
        ids = [line[4:].strip() for line in response.text.splitlines() if line.startswith("id: ")]
        if ids:  # a response without ids (a 202, a plain result) leaves the resumption point as it was
            self.last_event_id = ids[-1]
        return messages

    def post(self, method: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(_ids), "method": method}
        if params is not None:
            message["params"] = params
        self.last_request_id = message["id"]
        return self.send(message)

    def send(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """POST any JSON-RPC message (a request, a notification, or a response to the server)."""
        body = json.dumps(message).encode()
        headers = self.headers()
        self.last = self.http.post(self.url, content=body, headers=headers)
        return self._record(headers, body)

    def resume(self) -> list[dict[str, Any]]:
        assert self.last_event_id is not None
        headers = {**self.headers(), "last-event-id": self.last_event_id, "accept": "text/event-stream"}
        self.last = self.http.get(self.url, headers=headers)
        return self._record(headers, b"")

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The response message of a request (resuming as often as the server ends the response early)."""
        messages = self.post(method, params)
        for _ in range(60):
            responses = [m for m in messages if "result" in m or "error" in m]
            if responses:
                return responses[-1]
            assert "retry: " in self.last.text, self.last.text
            messages = self.resume()
        raise AssertionError("no response after 60 resumptions")
