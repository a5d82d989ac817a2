"""The 2026-07-28 routing headers a client sends with a request (`Mcp-Method`, `Mcp-Name`,
`Mcp-Param-*`), and how a value is written in one (`=?base64?...?=` when it is not printable ASCII):
what the kit's clients send and what `transport.headers` checks against."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_TASK_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})


def name_key(method: str) -> str | None:
    """The param `Mcp-Name` carries for `method` (a tool, prompt or resource name, a task id), if any."""
    return _NAMED.get(method) or ("taskId" if method in _TASK_METHODS else None)


def encode(value: str) -> str:
    """A header value as a client sends it: as is when printable ASCII, else `=?base64?...?=`."""
    if value.isascii() and not _CONTROL.search(value) and value == value.strip():
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


def client_headers(method: str, params: dict[str, Any], header_params: Mapping[str, str] | None) -> dict[str, str]:
    """The metadata headers a 2026 client sends with a request (what `validate` checks)."""
    headers = {"mcp-method": encode(method)}
    key = name_key(method)
    if key is not None and isinstance(params.get(key), str):
        headers["mcp-name"] = encode(params[key])
    raw = params.get("arguments")
    arguments: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for header, argument in (header_params or {}).items():
        text = as_header_text(arguments.get(argument))
        if text is not None:
            headers[f"mcp-param-{header}"] = encode(text)
    return headers


def as_header_text(value: Any) -> str | None:
    """An argument as a header carries it: strings, integers (an integral float too) and booleans."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else None
