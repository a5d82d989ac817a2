"""2026-07-28 request metadata headers: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`.

Values may be sent as `=?base64?<b64 of UTF-8>?=`; they are decoded before comparison. Any
missing, mismatched or malformed header is -32020 with HTTP 400.
"""

from __future__ import annotations

import base64
import binascii
import decimal
import re
from collections.abc import Mapping
from typing import Any

from ..protocol.errors import HEADER_MISMATCH, MCPError

_ENCODED = re.compile(r"^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_TASK_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})


def _name_key(method: str) -> str | None:
    """The param `Mcp-Name` carries for `method` (a tool, prompt or resource name, a task id), if any."""
    return _NAMED.get(method) or ("taskId" if method in _TASK_METHODS else None)


def mismatch(message: str) -> MCPError:
    return MCPError(HEADER_MISMATCH, message, http_status=400)


def decode(value: str) -> str:
    """Decode one header value, raising -32020 for bad Base64 or characters a header cannot carry."""
    value = value.strip()
    if not (value.startswith("=?base64?") and value.endswith("?=") and len(value) >= 11):
        if _CONTROL.search(value):
            raise mismatch("Header value contains invalid characters")
        return value
    found = _ENCODED.match(value)
    if found is None or len(found.group(1)) % 4:
        raise mismatch("Header value has invalid Base64 encoding")
    try:
        return base64.b64decode(found.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise mismatch("Header value has invalid Base64 encoding") from None


def encode(value: str) -> str:
    """A header value as a client sends it: as is when printable ASCII, else `=?base64?...?=`."""
    if value.isascii() and not _CONTROL.search(value) and value == value.strip():
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


def client_headers(method: str, params: dict[str, Any], header_params: Mapping[str, str] | None) -> dict[str, str]:
    """The metadata headers a 2026 client sends with a request (what `validate` checks)."""
    headers = {"mcp-method": encode(method)}
    name_key = _name_key(method)
    if name_key is not None and isinstance(params.get(name_key), str):
        headers["mcp-name"] = encode(params[name_key])
    raw = params.get("arguments")
    arguments: dict[str, Any] = raw if isinstance(raw, dict) else {}
    for header, argument in (header_params or {}).items():
        text = _as_header_text(arguments.get(argument))
        if text is not None:
            headers[f"mcp-param-{header}"] = encode(text)
    return headers


def _as_header_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else None


def _same(header_value: str, body_value: Any) -> bool:
    if isinstance(body_value, (int, float)) and not isinstance(body_value, bool):
        return _number(header_value) == _number(body_value)
    expected = _as_header_text(body_value)
    return expected is not None and header_value == expected


def _number(value: str | int | float) -> decimal.Decimal | None:
    """A number compared exactly, however large (a float conversion overflows past 1e308); None if it is
    not one (or not finite)."""
    try:
        number = decimal.Decimal(value if isinstance(value, str) else repr(value))
    except (decimal.InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


def validate(
    headers: Mapping[str, str],
    method: str,
    params: dict[str, Any],
    header_params: Mapping[str, str] | None,
) -> None:
    """Check `Mcp-Method`, `Mcp-Name` and the tool's `Mcp-Param-*` headers against the body."""
    sent_method = headers.get("mcp-method")
    if sent_method is None:
        raise mismatch("Missing Mcp-Method header")
    if decode(sent_method) != method:
        raise mismatch(f"Mcp-Method header does not match the request method {method!r}")
    name_key = _name_key(method)
    if name_key is not None:
        sent_name = headers.get("mcp-name")
        if sent_name is None:
            raise mismatch("Missing Mcp-Name header")
        if decode(sent_name) != params.get(name_key):
            raise mismatch(f"Mcp-Name header does not match params.{name_key}")
    if header_params:
        raw = params.get("arguments")
        arguments: dict[str, Any] = raw if isinstance(raw, dict) else {}
        for header, argument in header_params.items():
            sent = headers.get(f"mcp-param-{header}")
            value = arguments.get(argument)
            if sent is None:
                if value is not None:
                    raise mismatch(f"Missing Mcp-Param-{header} header for argument {argument!r}")
                continue
            decoded = decode(sent)
            if value is None or not _same(decoded, value):
                raise mismatch(f"Mcp-Param-{header} header does not match argument {argument!r}")
