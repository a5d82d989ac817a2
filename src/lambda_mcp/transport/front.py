"""The front of the `/mcp` endpoint: turn one HTTP request into one typed `Inbound` value, or the
4xx that refuses it.

In order: Host/Origin (DNS rebinding), the auth gate (401/403), then per method. POST: body size
(413), JSON (400), a 2025-03-26 batch, the envelope (400), the scopes what it names need (403), the
era (modern when `_meta` names a protocol version, legacy with a session or legacy headers; see
docs/decisions.md, "Era selection"), the era's headers and `_meta` (400), `Accept` (406), and the
legacy session (400/404). GET and DELETE: the session, and for GET a typed `Last-Event-ID`.
"""

from __future__ import annotations

import json
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..auth.identity import Identity
from ..config import Settings
from ..dispatch.context import RequestContext
from ..observe.invocation import note
from ..protocol import jsonrpc, revisions
from ..protocol.errors import INVALID_PARAMS, INVALID_REQUEST, MCPError
from ..protocol.ids import parse_last_event_id
from ..protocol.jsonrpc import Message
from ..protocol.limits import MAX_ANSWER_BYTES, MAX_BATCH, MAX_SESSION_ID_CHARS, MAX_SUBSCRIPTIONS, MAX_URI_CHARS
from ..server.app import MCPApp
from ..storage.ports import SessionStore
from ..storage.records import SessionRecord
from . import security
from .access import Access
from .changes import LIST_FLAGS, readable
from .era import is_modern, modern_request
from .inbound import (
    Answered,
    Batch,
    Call,
    Cancel,
    ClientResponse,
    Close,
    Inbound,
    Listen,
    Resume,
    accepted,
    accepts,
    cancelled_request,
    claims_of,
    session_context,
    stateless_session,
)
from .replies import error_reply, unknown_event_id
from .request import McpRequest


class Front:
    def __init__(
        self,
        app: MCPApp,
        sessions: SessionStore,
        settings: Settings,
        access: Access,
        *,
        default_hosts: tuple[str, ...] = (),
        default_origins: tuple[str, ...] = (),
        stateless: bool = False,
    ) -> None:
        self.app = app
        self.stateless = stateless
        self.sessions = sessions
        self.settings = settings
        self.access = access
        self.hosts = (*default_hosts, *settings.allowed_hosts)
        self.origins = (*default_origins, *settings.allowed_origins)

    async def read(self, request: Request) -> Inbound | Answered:
        """The request, typed; or the front's own answer to it. It reads and never writes: what a request
        changes is its transport's (and the endpoint's: the session touch)."""
        read = await self._read(request)
        return Answered(read) if isinstance(read, Response) else read

    async def _read(self, request: Request) -> Inbound | Response:
        refused = security.check(request, self.hosts, self.origins, self.settings.trust_event_domain)
        if refused is not None:
            return refused
        if request.method not in ("POST", "GET", "DELETE"):
            return Response(status_code=405, headers={"Allow": "GET, POST, DELETE"})
        caller = await self.access.authenticate(request)
        if isinstance(caller, Response):
            return caller
        if request.method == "POST":
            return await self._post(request, caller)
        if request.method == "GET":
            return await self._get(request, caller)
        return await self._delete(request, caller)

    # -- POST -----------------------------------------------------------------------------
    async def _post(self, request: Request, caller: Identity | None) -> Inbound | Response:
        limit = self.settings.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            return _too_large(limit)
        body = bytearray()
        more = True
        while more:  # the ASGI messages themselves: cheaper than `request.stream()` for a one-chunk body
            received = await request.receive()
            if received["type"] != "http.request":
                break
            body.extend(received.get("body", b""))
            more = received.get("more_body", False)
            if len(body) > limit:
                return _too_large(limit)
        if isinstance(request, McpRequest):
            request.body_bytes = len(body)
        try:
            decoded = jsonrpc.parse(bytes(body))
        except MCPError as exc:
            return error_reply(400, exc.code, exc.message)
        if isinstance(decoded, list):
            return await self._batch(request, decoded, caller)
        try:
            message = jsonrpc.classify(decoded)
        except MCPError as exc:
            rid = exc.data.get("id") if isinstance(exc.data, dict) else None
            return error_reply(400, exc.code, exc.message, rid)
        name = (message.params or {}).get("name") if message.method == "tools/call" else None
        note(mcp_method=message.method or message.kind, tool_name=name if isinstance(name, str) else None)
        refused = self._check_scopes(request, caller, [message])
        if refused is not None:
            return refused
        if is_modern(request, message):
            return await self._modern(request, message, caller)
        return await self._legacy(request, message, caller)

    def _check_scopes(self, request: Request, caller: Identity | None, messages: list[Message]) -> Response | None:
        """403 `insufficient_scope` when a message names a tool, prompt or resource the token may not use."""
        if caller is None:
            return None
        needed: frozenset[str] = frozenset()
        for message in messages:
            if message.kind != "response":
                needed |= self.app.scopes_for(message.method, message.params or {})
        if caller.allows(needed):
            return None
        return self.access.forbidden(request, needed, messages[0].id if len(messages) == 1 else None)

    async def _modern(self, request: Request, message: Message, caller: Identity | None) -> Inbound | Response:
        if message.kind == "notification":
            return accepted()
        params = message.params or {}
        try:
            name = params.get("name") if message.method == "tools/call" else None
            tool = self.app.tools.get(name) if isinstance(name, str) else None
            version, capabilities = modern_request(
                request, message.method, params, tool.header_params if tool else None
            )
        except MCPError as exc:
            return error_reply(exc.http_status or 400, exc.code, exc.message, message.id, exc.data)
        if message.method == "subscriptions/listen":
            wanted = params.get("notifications")
            if not isinstance(wanted, dict):
                return error_reply(400, INVALID_PARAMS, "subscriptions/listen needs a notifications filter", message.id)
            principal, scopes = _who(caller)
            return Listen(message, await self._honoured(wanted, principal, scopes), principal)
        size = _body_bytes(request)
        context = RequestContext(
            "modern", version, capabilities, None, *_who(caller), message.id, size, claims_of(caller)
        )
        return self._call(request, message, context)

    async def _honoured(
        self, wanted: dict[str, Any], principal: str | None, scopes: frozenset[str] | None
    ) -> dict[str, Any]:
        """The part of a listen filter this server serves: list changes it announces, and the resources this
        caller may subscribe to (its scopes allow them and the app's filter too; at most `MAX_SUBSCRIPTIONS`,
        each a URI of at most `MAX_URI_CHARS`)."""
        caps = self.app.capabilities()
        honoured: dict[str, Any] = {}
        for kind, flag in LIST_FLAGS.items():
            if wanted.get(flag) is True and caps.get(kind, {}).get("listChanged"):
                honoured[flag] = True
        uris = wanted.get("resourceSubscriptions")
        if isinstance(uris, list) and caps.get("resources", {}).get("subscribe"):
            fitting = [u for u in uris if isinstance(u, str) and len(u) <= MAX_URI_CHARS][:MAX_SUBSCRIPTIONS]
            allowed = readable(self.app, fitting, scopes)
            honoured["resourceSubscriptions"] = [u for u in allowed if await self.app.may_subscribe(u, principal)]
        return honoured

    async def _legacy(self, request: Request, message: Message, caller: Identity | None) -> Inbound | Response:
        header_version = request.headers.get("mcp-protocol-version")
        if header_version is not None and header_version.strip() not in revisions.LEGACY_VERSIONS:
            return error_reply(400, INVALID_REQUEST, f"Unsupported MCP-Protocol-Version: {header_version}", message.id)
        if message.method == "initialize" and message.kind == "request":
            size = _body_bytes(request)
            context = RequestContext(
                "legacy", revisions.NEWEST_LEGACY, {}, None, *_who(caller), message.id, size, claims_of(caller)
            )
            return self._call(request, message, context)
        found = await self._session(request, caller)
        if isinstance(found, Response):
            return found
        context = session_context(found, caller, message.id, _body_bytes(request))
        if message.kind == "response":
            size = _body_bytes(request) or len(json.dumps(message.raw, separators=(",", ":")))
            if size > MAX_ANSWER_BYTES:
                return error_reply(400, INVALID_REQUEST, f"Response too large: at most {MAX_ANSWER_BYTES} bytes")
            return ClientResponse(found, message.raw, context)
        if message.kind == "notification":
            rid = cancelled_request(message)
            return accepted() if rid is None else Cancel(found, rid, context)
        return self._call(request, message, context)

    def _call(self, request: Request, message: Message, context: RequestContext) -> Inbound | Response:
        if message.kind == "notification":
            return accepted()
        wanted = accepts(request)
        if not (wanted.json or wanted.sse):
            return error_reply(
                406, INVALID_REQUEST, "Not Acceptable: accept application/json or text/event-stream", message.id
            )
        return Call(message, context, wanted)

    async def _batch(self, request: Request, items: list[Any], caller: Identity | None) -> Inbound | Response:
        version = request.headers.get("mcp-protocol-version")
        only_0326 = "Invalid Request: batches are only accepted from 2025-03-26 clients"
        if not items or (version is not None and not revisions.has_batches(version.strip())):
            return error_reply(400, INVALID_REQUEST, only_0326)
        if len(items) > MAX_BATCH:
            return error_reply(400, INVALID_REQUEST, f"Invalid Request: a batch holds at most {MAX_BATCH} messages")
        found = await self._session(request, caller)
        if isinstance(found, Response):
            return found
        if not revisions.has_batches(found.protocol_version):  # batches exist in that revision only
            return error_reply(400, INVALID_REQUEST, only_0326)
        refused = self._check_scopes(request, caller, [m for m in map(_classified, items) if m is not None])
        if refused is not None:  # the whole batch: nothing in it runs
            return refused
        return Batch(items, session_context(found, caller, body_bytes=_body_bytes(request)))

    # -- GET and DELETE -------------------------------------------------------------------
    async def _get(self, request: Request, caller: Identity | None) -> Inbound | Response:
        if "mcp-session-id" not in request.headers:
            return Response(status_code=405, headers={"Allow": "POST"})
        found = await self._session(request, caller)
        if isinstance(found, Response):
            return found
        header = request.headers.get("last-event-id")
        last = parse_last_event_id(header) if header else None
        if header and last is None:
            return unknown_event_id()
        return Resume(found, last, session_context(found, caller))

    async def _delete(self, request: Request, caller: Identity | None) -> Inbound | Response:
        if "mcp-session-id" not in request.headers:
            if request.headers.get("mcp-protocol-version", "").strip() in revisions.MODERN_VERSIONS:
                return Response(status_code=405, headers={"Allow": "POST"})
            return error_reply(400, INVALID_REQUEST, "Bad Request: missing MCP-Session-Id header")
        found = await self._session(request, caller)
        return found if isinstance(found, Response) else Close(found)

    async def _session(self, request: Request, caller: Identity | None) -> SessionRecord | Response:
        """The caller's live session named by `MCP-Session-Id` (404 for an unknown, expired or foreign one)."""
        raw = request.headers.get("mcp-session-id")
        stateless = self.stateless and request.method == "POST"  # AgentCore Runtime: ids the kit never issued
        if not raw and not stateless:
            return error_reply(400, INVALID_REQUEST, "Bad Request: missing MCP-Session-Id header (initialize first)")
        now, session_id = time.time(), raw if raw and _looks_like_session(raw) else None
        session = await self.sessions.get(session_id, now) if session_id else None
        if session is None and stateless:
            return stateless_session(request, session_id, caller, now)
        if session is None or session.principal != (caller.principal if caller else None):
            return error_reply(404, INVALID_REQUEST, "Session not found: initialize a new session")
        return session


def _who(caller: Identity | None) -> tuple[str | None, frozenset[str] | None]:
    return (caller.principal, caller.scopes) if caller is not None else (None, None)


def _looks_like_session(session_id: str) -> bool:
    """Whether a session id could be one the kit minted (anything else never reaches storage keys)."""
    token = session_id.replace("-", "").replace("_", "")
    return len(session_id) <= MAX_SESSION_ID_CHARS and token.isascii() and token.isalnum()


def _too_large(limit: int) -> Response:
    return error_reply(413, INVALID_REQUEST, f"Request body too large: the limit is {limit} bytes")


def _classified(item: object) -> Message | None:
    try:
        return jsonrpc.classify(item)
    except MCPError:
        return None


def _body_bytes(request: Request) -> int:
    return request.body_bytes if isinstance(request, McpRequest) else 0
