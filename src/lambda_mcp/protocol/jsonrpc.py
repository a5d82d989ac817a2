"""Decode and classify JSON-RPC 2.0 envelopes and build response objects; nothing MCP-specific."""

from __future__ import annotations

import json
from typing import Any, Literal, TypeGuard

from .errors import INVALID_REQUEST, PARSE_ERROR, MCPError
from .limits import MAX_DEPTH, MAX_ID_BYTES, MAX_INTEGER_ID
from .values import Value, set_field

RequestId = str | int
Kind = Literal["request", "notification", "response"]


class Message(Value):
    """One classified JSON-RPC message.

    `id` is set for requests and responses; `method`/`params` for requests and notifications;
    `result`/`error` for responses.
    """

    __slots__ = ("kind", "raw", "id", "method", "params")
    kind: Kind
    raw: dict[str, Any]
    id: RequestId | None
    method: str
    params: dict[str, Any] | None

    def __init__(
        self,
        kind: Kind,
        raw: dict[str, Any],
        id: RequestId | None = None,
        method: str = "",
        params: dict[str, Any] | None = None,
    ) -> None:
        set_field(self, "kind", kind)
        set_field(self, "raw", raw)
        set_field(self, "id", id)
        set_field(self, "method", method)
        set_field(self, "params", params)


def valid_id(value: object) -> TypeGuard[RequestId]:
    """Whether `value` may be a request id here: a string of at most `MAX_ID_BYTES` bytes or a 64-bit
    integer (ids become parts of stream names and storage keys)."""
    if isinstance(value, str):
        if len(value) > MAX_ID_BYTES:
            return False
        try:
            return len(value.encode()) <= MAX_ID_BYTES
        except UnicodeEncodeError:  # a lone surrogate (valid JSON, not UTF-8): no key or header can hold it
            return False
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_INTEGER_ID


def parse(body: bytes) -> Any:
    """Decode a request body; `MCPError(PARSE_ERROR)` for anything that is not JSON of at most
    `MAX_DEPTH` levels (deeper input would otherwise cost recursion: an error, never a crash)."""
    try:
        decoded = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise MCPError(PARSE_ERROR, "Parse error: the body is not valid JSON") from None
    # a body with no more brackets than the limit cannot nest deeper than it (most bodies: no walk)
    if body.count(b"[") + body.count(b"{") > MAX_DEPTH and _too_deep(decoded):
        raise MCPError(PARSE_ERROR, f"Parse error: JSON nested deeper than {MAX_DEPTH} levels")
    return decoded


def _too_deep(value: Any) -> bool:
    """Whether containers nest more than `MAX_DEPTH` levels (breadth first: each level once)."""
    level: list[Any] = [value] if isinstance(value, dict | list) else []
    for _ in range(MAX_DEPTH):
        level = [
            item
            for container in level
            for item in (container.values() if isinstance(container, dict) else container)
            if isinstance(item, dict | list)
        ]
        if not level:
            return False
    return True


def classify(obj: object) -> Message:
    """Classify one decoded JSON value, raising `MCPError(INVALID_REQUEST)` when it is no envelope.

    The error carries the request id in `data["id"]` when one could be read, so the
    caller can echo it.
    """
    if not isinstance(obj, dict):
        raise MCPError(INVALID_REQUEST, "Invalid Request: a JSON-RPC message must be an object")
    raw: dict[str, Any] = obj
    rid = raw.get("id")
    id_ok = valid_id(rid)
    echo = {"id": rid} if id_ok else None
    if raw.get("jsonrpc") != "2.0":
        raise MCPError(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', echo)
    if "method" in raw:
        method = raw["method"]
        if not isinstance(method, str) or not method:
            raise MCPError(INVALID_REQUEST, 'Invalid Request: "method" must be a string', echo)
        params = raw.get("params")
        if params is not None and not isinstance(params, dict):
            raise MCPError(INVALID_REQUEST, 'Invalid Request: "params" must be an object', echo)
        if "id" not in raw:
            return Message("notification", raw, method=method, params=params)
        if not id_ok:
            raise MCPError(
                INVALID_REQUEST,
                f'Invalid Request: "id" must be a string of at most {MAX_ID_BYTES} bytes or a 64-bit integer',
            )
        return Message("request", raw, id=rid, method=method, params=params)
    if ("result" in raw) != ("error" in raw) and id_ok:
        return Message("response", raw, id=rid)
    raise MCPError(INVALID_REQUEST, "Invalid Request: neither a request, a notification nor a response", echo)


def result_message(rid: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def error_message(rid: RequestId | None, error: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "error": error}
    if rid is not None:
        message["id"] = rid
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def request(rid: RequestId, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message = notification(method, params)
    message["id"] = rid
    return message


REPLAYED_PARAMS = ("name", "arguments", "uri", "_meta")
"""What a task or a suspended call keeps of a request's params: what re-running it needs, nothing else
(whatever else a client sends is not stored)."""


def replayable(message: dict[str, Any]) -> dict[str, Any]:
    """A request as a task or a suspended call records it, to run it again later: its envelope and the
    params that name and parametrise what runs."""
    params = message.get("params")
    kept = {k: params[k] for k in REPLAYED_PARAMS if k in params} if isinstance(params, dict) else {}
    return {**{k: message[k] for k in ("jsonrpc", "id", "method") if k in message}, "params": kept}
