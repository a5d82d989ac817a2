"""2026-07-28 request metadata headers: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`.

Values may be sent as `=?base64?<b64 of UTF-8>?=`; they are decoded before comparison. Any
missing, mismatched or malformed header is -32020 with HTTP 400. A request with several such problems
(and `_meta` ones, `era.modern_request`) gets one error naming them all (`Problem`, `refusal`), each with
what to send instead.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..protocol.errors import HEADER_MISMATCH, MCPError
from ..protocol.request_headers import as_header_text, encode, name_key
from ..protocol.values import Value, set_field

if TYPE_CHECKING:
    import decimal
_ENCODED = re.compile(r"^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NOUNS = {"tools/call": "tool name", "prompts/get": "prompt name", "resources/read": "resource URI"}
_SHOWN_CHARS = 200
"""A body value longer than this is not repeated in an error message (a placeholder stands for it)."""


def mismatch(message: str) -> MCPError:
    return MCPError(HEADER_MISMATCH, message, http_status=400)


class Problem(Value):
    """One thing wrong with a 2026 request: its `kind` ("missing", "mismatched", "invalid", "unsupported"),
    the `item` with what to send (how a list of several names it), the message it gets when it is the only
    one (`alone`), and the JSON-RPC code and data it is answered with then."""

    __slots__ = ("kind", "item", "alone", "code", "data")
    kind: str
    item: str
    alone: str
    code: int
    data: Any

    def __init__(self, kind: str, item: str, alone: str, code: int = HEADER_MISMATCH, data: Any = None) -> None:
        set_field(self, "kind", kind)
        set_field(self, "item", item)
        set_field(self, "alone", alone)
        set_field(self, "code", code)
        set_field(self, "data", data)


_KINDS = ("missing", "mismatched", "invalid", "unsupported")


def refusal(problems: list[Problem]) -> MCPError:
    """One HTTP 400 error for all of `problems` (not empty): the first one's code and data, so a request
    with a single problem is answered as before, and a message naming every item, grouped by kind."""
    first = problems[0]
    if len(problems) == 1:
        return MCPError(first.code, first.alone, first.data, http_status=400)
    groups = [(kind, [p.item for p in problems if p.kind == kind]) for kind in _KINDS]
    listed = " | ".join(f"{kind}: " + "; ".join(items) for kind, items in groups if items)
    message = f"Invalid 2026 request ({len(problems)} problems): {listed}"
    return MCPError(first.code, message, first.data, http_status=400)


def shown(value: Any, placeholder: str) -> str:
    """`value` as a header carries it, for an error message; `placeholder` when it is not a short string."""
    if not isinstance(value, str) or len(value) > _SHOWN_CHARS:
        return placeholder
    try:
        return encode(value)
    except UnicodeEncodeError:  # a lone surrogate (JSON allows "\ud800"): no header can carry it
        return placeholder


def matches(sent: str | None, expected: str | None) -> bool:
    """Whether header value `sent`, decoded, is `expected` (never when either is absent or `sent` is malformed)."""
    if sent is None or expected is None:
        return False
    try:
        return decode(sent) == expected
    except MCPError:
        return False


def header_problem(name: str, sent: str | None, send: str, what: str) -> Problem:
    """The problem with required header `name`, which does not `matches` the body: `sent` as received,
    `send` what to send instead, and `what` the body item it must match."""
    if sent is None:
        return Problem("missing", f"header {name}: {send}", f"Missing {name} header: send {name}: {send}")
    try:
        decode(sent)
    except MCPError as exc:
        reason = exc.message[0].lower() + exc.message[1:]
        return Problem("invalid", f"header {name} ({reason}): {send}", f"{name} {reason}: send {name}: {send}")
    item = f"header {name} must match {what}: {send}"
    return Problem("mismatched", item, f"{name} header does not match {what}: send {name}: {send}")


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


def _same(header_value: str, body_value: Any) -> bool:
    if isinstance(body_value, (int, float)) and not isinstance(body_value, bool):
        return _number(header_value) == _number(body_value)
    expected = as_header_text(body_value)
    return expected is not None and header_value == expected


def _number(value: str | int | float) -> decimal.Decimal | None:
    """A number compared exactly, however large (a float conversion overflows past 1e308); None if it is
    not one (or not finite)."""
    import decimal  # only a numeric `Mcp-Param-*` header needs it: most requests never load it

    try:
        number = decimal.Decimal(value if isinstance(value, str) else repr(value))
    except (decimal.InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


def problems(
    headers: Mapping[str, str],
    method: str,
    params: dict[str, Any],
    header_params: Mapping[str, str] | None,
) -> list[Problem]:
    """Every problem with `Mcp-Method`, `Mcp-Name` and the tool's `Mcp-Param-*` headers, checked against the
    body, in the order a single one was once reported."""
    found: list[Problem] = []
    sent = headers.get("mcp-method")
    if not matches(sent, method):
        found.append(header_problem("Mcp-Method", sent, shown(method, "<method>"), f"the request method {method!r}"))
    key = name_key(method)
    if key is not None:
        value = params.get(key)
        sent = headers.get("mcp-name")
        if not matches(sent, value if isinstance(value, str) else None):
            noun = _NOUNS.get(method, "task id")
            send = f"{shown(value, f'<{noun}>')} (for {method} it carries the {noun}, params.{key})"
            found.append(header_problem("Mcp-Name", sent, send, f"params.{key}"))
    if header_params:
        raw = params.get("arguments")
        arguments: dict[str, Any] = raw if isinstance(raw, dict) else {}
        for header, argument in header_params.items():
            checked = _param_problem(headers.get(f"mcp-param-{header}"), header, argument, arguments.get(argument))
            if checked is not None:
                found.append(checked)
    return found


def _param_problem(sent: str | None, header: str, argument: str, value: Any) -> Problem | None:
    """The problem with `Mcp-Param-<header>`, which carries `argument` (`value`) and is absent without it."""
    name = f"Mcp-Param-{header}"
    what = f"argument {argument!r}"
    if value is None:
        if sent is None:
            return None
        fix = f"drop it ({what} is absent)"
        return Problem(
            "mismatched", f"header {name} must match {what}: {fix}", f"{name} header does not match {what}: {fix}"
        )
    if sent is not None:
        try:
            if _same(decode(sent), value):
                return None
        except MCPError:
            pass
    return header_problem(name, sent, shown(as_header_text(value), f"<{argument}>"), what)


def validate(
    headers: Mapping[str, str],
    method: str,
    params: dict[str, Any],
    header_params: Mapping[str, str] | None,
) -> None:
    """Check `Mcp-Method`, `Mcp-Name` and the tool's `Mcp-Param-*` headers against the body (one -32020
    naming every problem)."""
    found = problems(headers, method, params, header_params)
    if found:
        raise refusal(found)
