"""What both eras' sessions share: request ids, how a JSON-RPC response becomes a result or an error,
how notifications are shown, and who answers the server's questions."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
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


class Requesting(Protocol):
    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]: ...


MAX_PAGES = 1000


def entries(session: Requesting, method: str, key: str) -> Iterator[dict[str, Any]]:
    """Every entry of a paginated list (`tools/list` and `tools`, ...), page after page as they are read."""
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        page = session.request(method, {"cursor": cursor} if cursor else {})
        yield from (entry for entry in page.get(key) or [] if isinstance(entry, dict))
        cursor = page.get("nextCursor")
        if not cursor:
            return
        if cursor in seen:
            raise RemoteFailure(f"the server gave the same nextCursor twice while listing {key}")
        seen.add(cursor)
    raise RemoteFailure(f"the server's {method} went on past {MAX_PAGES} pages")


def find(session: Requesting, method: str, key: str, name: str) -> dict[str, Any] | None:
    """The listed entry called `name` (a tool, a prompt), if the server lists one."""
    return next((entry for entry in entries(session, method, key) if entry.get("name") == name), None)
