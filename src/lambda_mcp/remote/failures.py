"""What can go wrong in a remote call, as exceptions that carry their one-line message and exit status."""

from __future__ import annotations

from typing import Any

USAGE = 2
"""Exit status for usage, connection and HTTP-level failures."""
ERROR_RESULT = 1
"""Exit status for a JSON-RPC error or a tool result with `isError: true`."""


class RemoteFailure(Exception):
    """A failure the CLI reports on one line of stderr, then exits with `status`."""

    def __init__(self, message: str, status: int = USAGE) -> None:
        super().__init__(message)
        self.status = status


class RpcError(RemoteFailure):
    """A JSON-RPC error the server answered (exit status 1)."""

    def __init__(self, error: dict[str, Any], http_status: int | None = None) -> None:
        self.code = error.get("code")
        self.data = error.get("data")
        text = str(error.get("message") or "no message")
        prefix = f"HTTP {http_status}, " if http_status and http_status >= 400 else ""
        super().__init__(f"{prefix}error {self.code}: {one_line(text)}", ERROR_RESULT)


def one_line(text: str, limit: int = 400) -> str:
    """`text` squeezed onto one line, shortened past `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class Unauthorized(RemoteFailure):
    """HTTP 401: the server wants credentials, or refused the ones sent. `challenge` is its `WWW-Authenticate`
    challenge, wherever the front door put it ("" when it sent none)."""

    def __init__(self, message: str, challenge: str) -> None:
        super().__init__(message)
        self.challenge = challenge


METHOD_NOT_FOUND = -32601
OFFERED_BY = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resource templates",
    "resources/read": "resources",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
}
"""The methods a server without the capability answers with Method not found, and what it does not offer."""


def absent(method: str, error: RpcError) -> str | None:
    """ "this server offers no resources" when `error` says the server has no such method, else None."""
    if error.code != METHOD_NOT_FOUND or method not in OFFERED_BY:
        return None
    return f"this server offers no {OFFERED_BY[method]}"
