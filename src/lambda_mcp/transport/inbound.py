"""What the front makes of one HTTP request to `/mcp`: a typed `Inbound` value for a transport to
serve, or `Answered`, the response the front gives itself (a refusal, or a 202 for a notification)."""

from __future__ import annotations

import functools
import secrets
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..auth.identity import Identity
from ..dispatch.context import RequestContext
from ..protocol import revisions
from ..protocol.ids import ChangesCursor, EventId
from ..protocol.jsonrpc import Message, RequestId, valid_id
from ..protocol.values import Value, set_field
from ..server.call import NO_CLAIMS
from ..storage.records import SessionRecord


class Accepts(Value):
    """What the client's `Accept` header allows (a missing header accepts both)."""

    __slots__ = ("json", "sse")
    json: bool
    sse: bool

    def __init__(self, json: bool, sse: bool) -> None:
        set_field(self, "json", json)
        set_field(self, "sse", sse)


class Call(Value):
    """A request to run: `initialize`, or any method of either era."""

    __slots__ = ("message", "context", "accepts")
    message: Message
    context: RequestContext
    accepts: Accepts

    def __init__(self, message: Message, context: RequestContext, accepts: Accepts) -> None:
        set_field(self, "message", message)
        set_field(self, "context", context)
        set_field(self, "accepts", accepts)


class Listen(Value):
    """A 2026 `subscriptions/listen`: `honoured` is the part of the client's filter the server serves."""

    __slots__ = ("message", "honoured", "principal")
    message: Message
    honoured: dict[str, Any]
    principal: str | None

    def __init__(self, message: Message, honoured: dict[str, Any], principal: str | None) -> None:
        set_field(self, "message", message)
        set_field(self, "honoured", honoured)
        set_field(self, "principal", principal)


class ClientResponse(Value):
    """A legacy client's response to one of the server's requests."""

    __slots__ = ("session", "message", "context")
    session: SessionRecord
    message: dict[str, Any]
    context: RequestContext

    def __init__(self, session: SessionRecord, message: dict[str, Any], context: RequestContext) -> None:
        set_field(self, "session", session)
        set_field(self, "message", message)
        set_field(self, "context", context)


class Cancel(Value):
    """A legacy `notifications/cancelled` for `request_id`."""

    __slots__ = ("session", "request_id", "context")
    session: SessionRecord
    request_id: RequestId
    context: RequestContext

    def __init__(self, session: SessionRecord, request_id: RequestId, context: RequestContext) -> None:
        set_field(self, "session", session)
        set_field(self, "request_id", request_id)
        set_field(self, "context", context)


class Batch(Value):
    """A 2025-03-26 JSON-RPC batch on a session."""

    __slots__ = ("items", "context")
    items: list[Any]
    context: RequestContext

    def __init__(self, items: list[Any], context: RequestContext) -> None:
        set_field(self, "items", items)
        set_field(self, "context", context)


class Resume(Value):
    """A legacy GET: the session's stream (`last` None) or a resumption after a `Last-Event-ID`."""

    __slots__ = ("session", "last", "context")
    session: SessionRecord
    last: EventId | ChangesCursor | None
    context: RequestContext

    def __init__(self, session: SessionRecord, last: EventId | ChangesCursor | None, context: RequestContext) -> None:
        set_field(self, "session", session)
        set_field(self, "last", last)
        set_field(self, "context", context)


class Close(Value):
    """A legacy DELETE: end the session."""

    __slots__ = ("session",)
    session: SessionRecord

    def __init__(self, session: SessionRecord) -> None:
        set_field(self, "session", session)


Inbound = Call | Listen | ClientResponse | Cancel | Batch | Resume | Close
"""A request the front read, for the endpoint and a transport to serve."""


class Answered(Value):
    """A request the front answered itself: a refusal (4xx), or a 202 for a notification it takes."""

    __slots__ = ("response",)
    response: Response

    def __init__(self, response: Response) -> None:
        set_field(self, "response", response)


def kept_alive(inbound: Inbound) -> SessionRecord | None:
    """The legacy session a request keeps alive (its expiry slides), if any: not one it closes."""
    if isinstance(inbound, (Listen, Close)):
        return None
    if isinstance(inbound, (ClientResponse, Cancel, Resume)):
        return inbound.session
    return inbound.context.session


def accepted() -> Response:
    """202: a notification or a client's response, taken."""
    return Response(status_code=202)


def accepts(request: Request) -> Accepts:
    accept = request.headers.get("accept")
    return _parse_accept(accept) if accept else Accepts(True, True)


@functools.lru_cache(maxsize=64)
def _parse_accept(accept: str) -> Accepts:
    """The media types an Accept value allows (clients send one of a few values: each parsed once)."""
    types = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    anything = "*/*" in types
    return Accepts(
        anything or "application/json" in types or "application/*" in types,
        anything or "text/event-stream" in types or "text/*" in types,
    )


def session_context(
    session: SessionRecord, caller: Identity | None, request_id: RequestId | None = None, body_bytes: int = 0
) -> RequestContext:
    """The context of a request on a live legacy session (its principal was checked against the caller)."""
    scopes = caller.scopes if caller is not None else None
    capabilities = session.client_capabilities
    return RequestContext(
        "legacy",
        session.protocol_version,
        capabilities,
        session,
        session.principal,
        scopes,
        request_id,
        body_bytes,
        claims_of(caller),
    )


def stateless_session(request: Request, session_id: str | None, caller: Identity | None, now: float) -> SessionRecord:
    """The session of a legacy POST that names none the kit knows, where the kit runs stateless (behind
    AgentCore Runtime, whose platform mints its own `Mcp-Session-Id`s; `Front(stateless=True)`), as a
    stateless server (the SDKs' `stateless_http`) serves it: never stored, the platform's id (when it could
    be a session id, else a fresh one), the revision its `MCP-Protocol-Version` names (absent: the default
    the spec assumes), the caller's principal, and no client capabilities (nothing is asked of the client)."""
    header = (request.headers.get("mcp-protocol-version") or "").strip()
    version = header if revisions.is_legacy(header) else revisions.DEFAULT_LEGACY
    principal = caller.principal if caller is not None else None
    sid = session_id or f"stateless-{secrets.token_hex(16)}"
    return SessionRecord(sid, version, {}, {}, now, now + 3600, principal, touched_at=now)


def claims_of(caller: Identity | None) -> Mapping[str, Any]:
    """The caller's token claims for its requests' contexts (its identity's own mapping, not a copy)."""
    return caller.claims if caller is not None else NO_CLAIMS


def cancelled_request(message: Message) -> RequestId | None:
    """The request a `notifications/cancelled` names, if it could be one of ours (anything else, such as
    an id longer than any request could have, is ignored)."""
    rid = (message.params or {}).get("requestId") if message.method == "notifications/cancelled" else None
    return rid if valid_id(rid) else None
