"""What both eras' sessions share: request ids, how a JSON-RPC response becomes a result or an error,
how notifications are shown, and who answers the server's questions."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from importlib import metadata
from typing import Any, Protocol

from .answers import Answerer
from .failures import RemoteFailure, RpcError

Notify = Callable[[dict[str, Any]], None]


def client_info() -> dict[str, str]:
    try:
        version = metadata.version("lambda-mcp")
    except metadata.PackageNotFoundError:
        version = "0"
    return {"name": "lambda-mcp-cli", "version": version}


class Session(Protocol):
    version: str

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result of `method`, after answering whatever the server asks on the way; RpcError if the
        server answers with an error."""
        ...

    def call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
        """`tools/call` with `params`, waiting for the tool's result when it runs as a task."""
        ...

    def close(self) -> None: ...


class Conversation:
    """The parts of a session that do not depend on the era."""

    def __init__(self, answerer: Answerer, notify: Notify) -> None:
        self.answerer = answerer
        self.notify = notify
        self._ids = itertools.count(1)

    def next_id(self) -> int:
        return next(self._ids)

    @staticmethod
    def outcome(response: dict[str, Any]) -> dict[str, Any]:
        """The result a JSON-RPC response carries; RpcError for an error response."""
        if isinstance(response.get("error"), dict):
            raise RpcError(response["error"])
        result = response.get("result")
        if not isinstance(result, dict):
            raise RemoteFailure(f"the server answered request {response.get('id')} without a result object")
        return result
