"""JSON-RPC and MCP error codes, and `MCPError`, the one exception that becomes a JSON-RPC error."""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND_LEGACY = -32002
URL_ELICITATION_REQUIRED = -32042
HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

UNAVAILABLE = (
    "Service temporarily unavailable (storage or the task queue is throttled or unreachable): retry the request"
)
"""The message of the -32603 answered with HTTP 503 when storage or the task queue failed after the
AWS client's own retries."""

_HTTP_STATUS_MODERN = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    METHOD_NOT_FOUND: 404,
    HEADER_MISMATCH: 400,
    MISSING_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
}


class KitFailure(Exception):
    """A failure of the kit's own machinery (storage, the task queue) met while a handler runs: never the
    handler's, so it is not turned into the tool's error result (its subclasses say what failed)."""


class MCPError(Exception):
    """An error answered to the client as a JSON-RPC error object.

    `http_status` overrides the status the transport would pick for this code.
    """

    def __init__(
        self,
        code: int,
        message: str,
        data: Any = None,
        *,
        http_status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status

    def to_error(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def modern_http_status(code: int) -> int:
    """The HTTP status the 2026-07-28 transport pins for a JSON-RPC error code (200 when unpinned)."""
    return _HTTP_STATUS_MODERN.get(code, 200)


def invalid_params(message: str, data: Any = None, *, http_status: int | None = None) -> MCPError:
    return MCPError(INVALID_PARAMS, message, data, http_status=http_status)


def insufficient_scope(scopes: frozenset[str]) -> MCPError:
    """403: the caller's token lacks scopes what the request reaches needs (a tool, prompt or resource,
    reached directly or through a task or a resumed call); `data.requiredScopes` names them."""
    message = "Forbidden: the token lacks a scope this operation needs"
    return MCPError(INVALID_REQUEST, message, {"requiredScopes": sorted(scopes)}, http_status=403)


def method_not_found(method: str) -> MCPError:
    return MCPError(METHOD_NOT_FOUND, f"Method not found: {method}")
