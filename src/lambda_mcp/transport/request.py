"""`McpRequest`: Starlette's request with headers looked up in a dict built once, not by a scan of the raw
list on every lookup (the endpoint reads about ten headers per request)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request


class FastHeaders(Headers):
    """Starlette `Headers` (raw list, `getlist`, ...) whose single-value lookups are dict lookups; the first
    value of a repeated header wins, as in `Headers`."""

    def __init__(self, scope: Any) -> None:  # what `Headers(scope=scope)` does, and the dict
        self._list = scope["headers"] = list(scope["headers"])
        self._first: dict[str, str] = {}
        for key, value in reversed(self._list):
            self._first[key.decode("latin-1")] = value.decode("latin-1")

    def __getitem__(self, key: str) -> str:
        return self._first[key.lower()]

    def __contains__(self, key: Any) -> bool:
        return isinstance(key, str) and key.lower() in self._first

    def get(self, key: str, default: Any = None) -> Any:
        return self._first.get(key.lower(), default)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())


class McpRequest(Request):
    body_bytes = 0
    """The size of the body the front read (0 until then)."""

    @cached_property
    def headers(self) -> Headers:  # computed once per request, as Starlette does
        return FastHeaders(self.scope)
