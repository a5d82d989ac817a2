"""Check every HTTP exchange with an MCP server: each emitted message against its revision's schema.

It remembers which method each request id named and which revision each session negotiated, so
responses that arrive on later streams (resumed GETs) are checked against the right types.
"""

from __future__ import annotations

import json
from typing import Any

from .schema import body_messages, message_errors

MODERN = "2026-07-28"


class Recorder:
    def __init__(self) -> None:
        self.methods: dict[tuple[str, Any], str] = {}
        self.session_versions: dict[str, str] = {}
        self.violations: list[str] = []
        self.checked = 0

    def exchange(
        self,
        request_headers: dict[str, str],
        request_body: bytes,
        status: int,
        response_headers: dict[str, str],
        response_body: bytes,
    ) -> list[dict[str, Any]]:
        """Validate one exchange; returns the server's messages. Header names must be lower-case."""
        session = response_headers.get("mcp-session-id") or request_headers.get("mcp-session-id") or ""
        requests = self._requests(request_body)
        version = self._version(request_headers, requests, session)
        for request in requests:
            if "method" in request and "id" in request:
                self.methods[(session, request["id"])] = request["method"]
        try:
            messages = body_messages(response_headers.get("content-type", ""), response_body)
        except (ValueError, UnicodeDecodeError) as exc:
            if status >= 300 and not response_body.strip().startswith((b"{", b"[")):
                return []
            self.violations.append(f"undecodable body ({status}): {exc}: {response_body[:200]!r}")
            return []
        for message in messages:
            if not isinstance(message, dict):
                continue
            if (
                message.get("method") is None
                and isinstance(message.get("result"), dict)
                and "protocolVersion" in message["result"]
            ):
                version = message["result"]["protocolVersion"]
                if session:
                    self.session_versions[session] = version
            method = self.methods.get((session, message.get("id"))) if "method" not in message else None
            self.checked += 1
            for problem in message_errors(message, version, method):
                self.violations.append(f"{problem} in {json.dumps(message)[:300]}")
        return messages

    def _requests(self, body: bytes) -> list[dict[str, Any]]:
        try:
            decoded = json.loads(body) if body else []
        except (ValueError, RecursionError):  # hostile input the server must refuse: nothing to record
            return []
        items = decoded if isinstance(decoded, list) else [decoded]
        return [item for item in items if isinstance(item, dict)]

    def _version(self, headers: dict[str, str], requests: list[dict[str, Any]], session: str) -> str:
        for request in requests:
            params = request.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            if isinstance(meta, dict) and meta.get("io.modelcontextprotocol/protocolVersion") == MODERN:
                return MODERN
        if session in self.session_versions:
            return self.session_versions[session]
        header = headers.get("mcp-protocol-version")
        if header in ("2025-03-26", "2025-06-18", "2025-11-25", MODERN):
            return header
        for request in requests:
            if request.get("method") == "initialize":
                return "2025-11-25"
        return "2025-03-26"
