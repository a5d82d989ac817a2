"""The `/mcp` endpoint: Streamable HTTP rules for one request of either era.

Chooses the era (`mcp-spec.md` §5.2), validates Host/Origin, body size, JSON and envelopes,
the 2026 metadata headers and legacy sessions, then runs the call and answers with JSON, a
buffered SSE body, or (on a streaming server) a live SSE stream with resumable event ids.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from ..auth.identity import Identity
from ..config import Settings
from ..dispatch.dispatcher import META_CAPABILITIES, META_VERSION, Dispatcher
from ..dispatch.scope import RequestScope, WaitInterrupted, WaitProgress
from ..protocol import jsonrpc, versions
from ..protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    MCPError,
)
from ..protocol.jsonrpc import Message
from ..storage.memory import InMemoryCallStore, InMemoryChangeLog
from ..storage.ports import CallStore, ChangeLog, EventLog, SessionStore, cursor_at
from ..storage.records import Change, SessionRecord
from . import headers as mcp_headers
from . import security, sse, waits
from .access import Access
from .calls import LiveCall, PendingRequests
from .replies import error_reply, json_reply, sse_reply, unknown_event_id
from .resumable import PREFIX as CALL_PREFIX
from .resumable import ResumableCalls

logger = logging.getLogger("lambda_mcp")
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
CHANGES_PREFIX = "changes~"
"""Event ids of a buffered GET stream: `changes~<change-log cursor>` (where the next poll reads from)."""
_LIST_FLAGS = {"tools": "toolsListChanged", "prompts": "promptsListChanged", "resources": "resourcesListChanged"}


def _accepts(request: Request) -> tuple[bool, bool]:
    """(JSON acceptable, SSE acceptable); a missing Accept header accepts both."""
    accept = request.headers.get("accept")
    if not accept:
        return True, True
    types = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    anything = "*/*" in types
    return (
        anything or "application/json" in types or "application/*" in types,
        anything or "text/event-stream" in types or "text/*" in types,
    )


_ALL_LISTS = {flag: True for flag in _LIST_FLAGS.values()}
"""A legacy session gets every list change (its GET stream has no filter)."""


def _change_notification(
    kind: str, uri: str | None, wanted: dict[str, Any], meta: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The notification for one change, if `wanted` (a `subscriptions/listen` filter: list flags and
    `resourceSubscriptions`) asks for it; `meta` goes into its `_meta` (a listen's subscription id)."""
    params: dict[str, Any] = {} if meta is None else {"_meta": meta}
    if kind in _LIST_FLAGS and wanted.get(_LIST_FLAGS[kind]):
        return jsonrpc.notification(f"notifications/{kind}/list_changed", params or None)
    if kind == "resource" and uri in wanted.get("resourceSubscriptions", ()):
        return jsonrpc.notification("notifications/resources/updated", {"uri": uri, **params})
    return None


def _is_cursor(text: str) -> bool:
    moment, _, suffix = text.partition("-")
    return len(moment) == 17 and moment.isdigit() and (suffix == "" or suffix.isalnum())


def _classified(item: object) -> Message | None:
    try:
        return jsonrpc.classify(item)
    except MCPError:
        return None


def _caller(request: Request) -> Identity | None:
    """Who sent the request (set by the endpoint's gate; None when auth is `none`)."""
    identity: Identity | None = request.state.identity
    return identity


def _principal(request: Request) -> str | None:
    identity = _caller(request)
    return identity.principal if identity is not None else None


def _scopes(request: Request) -> frozenset[str] | None:
    identity = _caller(request)
    return identity.scopes if identity is not None else None


def _session_scope(session: SessionRecord, request: Request) -> RequestScope:
    """The scope of a request on a live legacy session (its principal was checked against the caller)."""
    return RequestScope(
        era="legacy",
        version=session.protocol_version,
        client_capabilities=session.client_capabilities,
        session=session,
        principal=session.principal,
        scopes=_scopes(request),
    )


class MCPEndpoint:
    """ASGI app for the MCP endpoint. `streaming=False` is the buffered (Lambda) mode."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        sessions: SessionStore,
        events: EventLog,
        settings: Settings,
        *,
        streaming: bool,
        default_hosts: tuple[str, ...] = (),
        default_origins: tuple[str, ...] = (),
        calls: CallStore | None = None,
        changes: ChangeLog | None = None,
        access: Access,
    ) -> None:
        self.dispatcher = dispatcher
        self.access = access
        self.app = dispatcher.app
        self.sessions = sessions
        self.events = events
        self.settings = settings
        self.streaming = streaming
        self.hosts = (*default_hosts, *settings.allowed_hosts)
        self.origins = (*default_origins, *settings.allowed_origins)
        self.calls: dict[tuple[str, str], LiveCall] = {}
        self.in_flight: dict[tuple[str, str], LiveCall] = {}
        self.pending = PendingRequests()
        self.resumable = ResumableCalls(dispatcher, calls or InMemoryCallStore(), events, settings)
        self.changes = changes or InMemoryChangeLog()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            response = await self._serve(request)
        except Exception:  # the last line of defence: never a stack trace on the wire
            logger.exception("unhandled error in the MCP endpoint")
            response = error_reply(500, -32603, "Internal error")
        await response(scope, receive, send)

    async def _serve(self, request: Request) -> Response:
        refused = self._check_host_and_origin(request)
        if refused is not None:
            return refused
        if request.method not in ("POST", "GET", "DELETE"):
            return Response(status_code=405, headers={"Allow": "GET, POST, DELETE"})
        caller = await self.access.authenticate(request)
        if isinstance(caller, Response):
            return caller
        request.state.identity = caller
        if request.method == "POST":
            return await self._post(request)
        if request.method == "GET":
            return await self._get(request)
        return await self._delete(request)

    # -- security -------------------------------------------------------------------------
    def _check_host_and_origin(self, request: Request) -> Response | None:
        hosts, origins = self.hosts, self.origins
        event = request.scope.get("aws.event")
        if self.settings.trust_event_domain and isinstance(event, dict):
            domain = event.get("requestContext", {}).get("domainName")
            if isinstance(domain, str):  # the API's own domain, and pages served from it (same origin)
                hosts = (*hosts, domain, f"{domain}:*")
                origins = (*origins, f"https://{domain}", f"http://{domain}")
        if not security.host_allowed(request.headers.get("host"), hosts):
            return error_reply(403, INVALID_REQUEST, "Forbidden: Host header is not allowed")
        if not security.origin_allowed(request.headers.get("origin"), origins):
            return error_reply(403, INVALID_REQUEST, "Forbidden: Origin is not allowed")
        return None

    # -- POST -----------------------------------------------------------------------------
    async def _post(self, request: Request) -> Response:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.settings.max_body_bytes:
            return self._too_large()
        body = bytearray()
        async for chunk in request.stream():
            body.extend(chunk)
            if len(body) > self.settings.max_body_bytes:
                return self._too_large()
        try:
            decoded = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return error_reply(400, PARSE_ERROR, "Parse error: the body is not valid JSON")
        if isinstance(decoded, list):
            return await self._batch(request, decoded)
        try:
            message = jsonrpc.classify(decoded)
        except MCPError as exc:
            rid = exc.data.get("id") if isinstance(exc.data, dict) else None
            return error_reply(400, exc.code, exc.message, rid)
        refused = self._check_scopes(request, [message])
        if refused is not None:
            return refused
        if self._is_modern(request, message):
            return await self._modern(request, message)
        return await self._legacy(request, message)

    def _check_scopes(self, request: Request, messages: list[Message]) -> Response | None:
        """403 `insufficient_scope` when a message names a tool, prompt or resource the token may not use."""
        identity = _caller(request)
        if identity is None:
            return None
        needed: frozenset[str] = frozenset()
        for message in messages:
            if message.kind != "response":
                needed |= self.app.scopes_for(message.method, message.params or {})
        if identity.allows(needed):
            return None
        return self.access.forbidden(request, needed, messages[0].id if len(messages) == 1 else None)

    def _too_large(self) -> Response:
        limit = self.settings.max_body_bytes
        return error_reply(413, INVALID_REQUEST, f"Request body too large: the limit is {limit} bytes")

    def _is_modern(self, request: Request, message: Message) -> bool:
        """The era rule of mcp-spec.md §5.2: `_meta` versions are modern, sessions and legacy headers legacy."""
        if message.kind == "response":
            return False
        header = request.headers.get("mcp-protocol-version")
        meta = (message.params or {}).get("_meta")
        if message.method == "initialize":  # legacy unless it names a modern version (then: removed method)
            claimed = meta.get(META_VERSION) if isinstance(meta, dict) else header
            return isinstance(claimed, str) and claimed.strip() in versions.MODERN_VERSIONS
        if isinstance(meta, dict) and META_VERSION in meta:
            return True
        if "mcp-session-id" in request.headers:
            return False
        return header is not None and header.strip() not in versions.LEGACY_VERSIONS

    # -- modern (2026-07-28) --------------------------------------------------------------
    async def _modern(self, request: Request, message: Message) -> Response:
        if message.kind == "notification":
            return Response(status_code=202)
        rid = message.id
        params = message.params or {}
        header_version = request.headers.get("mcp-protocol-version")
        meta = params.get("_meta")
        try:
            if header_version is None:
                raise mcp_headers.mismatch("Missing MCP-Protocol-Version header")
            if (
                not isinstance(meta, dict)
                or not isinstance(meta.get(META_VERSION), str)
                or not isinstance(meta.get(META_CAPABILITIES), dict)
            ):
                raise MCPError(
                    INVALID_PARAMS,
                    "Invalid params: _meta must carry io.modelcontextprotocol/protocolVersion and clientCapabilities",
                    http_status=400,
                )
            version = meta[META_VERSION]
            if mcp_headers.decode(header_version) != version:
                raise mcp_headers.mismatch("MCP-Protocol-Version header does not match _meta protocolVersion")
            if version not in versions.MODERN_VERSIONS:
                raise MCPError(
                    UNSUPPORTED_PROTOCOL_VERSION,
                    "Unsupported protocol version",
                    {"supported": list(versions.SUPPORTED), "requested": version},
                    http_status=400,
                )
            tool = self.app.tools.get(params.get("name", "")) if message.method == "tools/call" else None
            mcp_headers.validate(request.headers, message.method, params, tool.header_params if tool else None)
        except MCPError as exc:
            return error_reply(exc.http_status or 400, exc.code, exc.message, rid, exc.data)
        scope = RequestScope(
            era="modern",
            version=version,
            client_capabilities=meta[META_CAPABILITIES],
            principal=_principal(request),
            scopes=_scopes(request),
        )
        if message.method == "subscriptions/listen":
            return await self._listen(request, message, scope)
        return await self._run(request, message, scope)

    async def _listen(self, request: Request, message: Message, scope: RequestScope) -> Response:
        wanted = (message.params or {}).get("notifications")
        if not isinstance(wanted, dict):
            return error_reply(400, INVALID_PARAMS, "subscriptions/listen needs a notifications filter", message.id)
        caps = self.app.capabilities()
        honoured: dict[str, Any] = {}
        for kind, flag in _LIST_FLAGS.items():
            if wanted.get(flag) is True and caps.get(kind, {}).get("listChanged"):
                honoured[flag] = True
        uris = wanted.get("resourceSubscriptions")
        if isinstance(uris, list) and caps.get("resources", {}).get("subscribe"):
            honoured["resourceSubscriptions"] = [u for u in uris if isinstance(u, str)]
        sub_meta = {SUBSCRIPTION_ID: message.id}
        ack = jsonrpc.notification(
            "notifications/subscriptions/acknowledged", {"notifications": honoured, "_meta": sub_meta}
        )
        if not self.streaming:
            # Buffered (Lambda): the ack, what changed within the hold (if one is set), then a graceful
            # close; the client listens again when it wants more.
            body = sse.event(ack)
            hold = min(self.settings.listen_hold_seconds, self.settings.max_wait_seconds)
            if hold > 0:
                for change in await self._poll_changes(request, cursor_at(time.time()), hold):
                    notification = _change_notification(change.kind, change.uri, honoured, sub_meta)
                    if notification is not None:
                        body += sse.event(notification)
            closing = jsonrpc.result_message(message.id, {"resultType": "complete", "_meta": sub_meta})  # type: ignore[arg-type]
            return sse_reply(body + sse.event(closing))

        async def stream() -> AsyncIterator[bytes]:
            queue = self.app.changes.listen()
            try:
                yield sse.event(ack)
                while True:
                    try:
                        kind, uri = await asyncio.wait_for(queue.get(), timeout=15)
                    except TimeoutError:
                        yield b": keep-alive\n\n"
                        continue
                    notification = _change_notification(kind, uri, honoured, sub_meta)
                    if notification is not None:
                        yield sse.event(notification)
            finally:
                self.app.changes.close(queue)

        return StreamingResponse(stream(), media_type=sse.MEDIA_TYPE, headers=sse.HEADERS)

    # -- legacy (2025-11-25 and earlier) --------------------------------------------------
    async def _legacy(self, request: Request, message: Message) -> Response:
        header_version = request.headers.get("mcp-protocol-version")
        if header_version is not None and header_version.strip() not in versions.LEGACY_VERSIONS:
            return error_reply(400, INVALID_REQUEST, f"Unsupported MCP-Protocol-Version: {header_version}", message.id)
        principal = _principal(request)
        if message.method == "initialize" and message.kind == "request":
            scope = RequestScope(era="legacy", version=versions.LEGACY[0], principal=principal, scopes=_scopes(request))
            return await self._run(request, message, scope)
        found = await self._session(request, principal)
        if isinstance(found, Response):
            return found
        session = found
        if message.kind == "response":
            await self._answer(request, session, message.raw)
            return Response(status_code=202)
        if message.kind == "notification":
            if message.method == "notifications/cancelled":
                await self._cancel(request, session, (message.params or {}).get("requestId"))
            return Response(status_code=202)
        scope = _session_scope(session, request)
        return await self._run(request, message, scope)

    async def _session(self, request: Request, principal: str | None) -> SessionRecord | Response:
        session_id = request.headers.get("mcp-session-id")
        if not session_id:
            return error_reply(400, INVALID_REQUEST, "Bad Request: missing MCP-Session-Id header (initialize first)")
        now = time.time()
        session = await self.sessions.get(session_id, now)
        if session is None or session.principal != principal:
            return error_reply(404, INVALID_REQUEST, "Session not found: initialize a new session")
        if now - session.touched_at >= self.settings.session_touch_seconds:
            await self.sessions.touch(session_id, now, now + self.settings.session_ttl_seconds)
        return session

    async def _answer(self, request: Request, session: SessionRecord, response: dict[str, Any]) -> None:
        """The client's response to a server-to-client request: to a live call here, to a task's input
        request, or to a suspended call (buffered)."""
        if self.pending.resolve(session.session_id, response):
            return
        tasks = self.dispatcher.task_methods
        if tasks is not None and await tasks.answer_input(_session_scope(session, request), response):
            return
        if not self.streaming:
            await self.resumable.answer(session.session_id, response)

    async def _cancel(self, request: Request, session: SessionRecord, request_id: object) -> None:
        """`notifications/cancelled`: stop the request wherever it runs (here, another instance, the worker)."""
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            return
        call = self.in_flight.get((session.session_id, str(request_id)))
        if call is not None:
            call.cancel()
        elif not self.streaming:
            await self.resumable.cancel(session.session_id, request_id)
        tasks = self.dispatcher.task_methods
        if tasks is not None:
            await tasks.cancel_created_by(_session_scope(session, request), request_id)

    async def _batch(self, request: Request, items: list[Any]) -> Response:
        """2025-03-26 batches: each member answered in one JSON array (or 202 if none needed answers)."""
        version = request.headers.get("mcp-protocol-version")
        if not items or (version is not None and version.strip() != "2025-03-26"):
            return error_reply(
                400, INVALID_REQUEST, "Invalid Request: batches are only accepted from 2025-03-26 clients"
            )
        found = await self._session(request, _principal(request))
        if isinstance(found, Response):
            return found
        session = found
        refused = self._check_scopes(request, [m for m in map(_classified, items) if m is not None])
        if refused is not None:  # the whole batch: nothing in it runs
            return refused
        answers: list[dict[str, Any]] = []
        for item in items:
            try:
                message = jsonrpc.classify(item)
            except MCPError as exc:
                rid = exc.data.get("id") if isinstance(exc.data, dict) else None
                answers.append(jsonrpc.error_message(rid, exc.to_error()))
                continue
            if message.kind == "response":
                await self._answer(request, session, message.raw)
            elif message.kind == "notification":
                if message.method == "notifications/cancelled":
                    await self._cancel(request, session, (message.params or {}).get("requestId"))
            elif message.method == "initialize":
                answers.append(
                    jsonrpc.error_message(
                        message.id, {"code": INVALID_REQUEST, "message": "initialize must not be batched"}
                    )
                )
            else:
                scope = _session_scope(session, request)
                response, _ = await self.dispatcher.handle(message, scope)
                if response is not None:
                    answers.append(response)
        if not answers:
            return Response(status_code=202)
        return Response(json.dumps(answers).encode(), media_type="application/json")

    # -- running a call -------------------------------------------------------------------
    async def _run(self, request: Request, message: Message, scope: RequestScope) -> Response:
        if message.kind == "notification":
            return Response(status_code=202)
        wants_json, wants_sse = _accepts(request)
        if not (wants_json or wants_sse):
            return error_reply(
                406, INVALID_REQUEST, "Not Acceptable: accept application/json or text/event-stream", message.id
            )
        if self.streaming and wants_sse:
            return await self._run_streaming(message, scope, wants_json)
        if wants_sse and waits.resumable(message, scope):
            return await self._wait(request, message, scope, None)
        if wants_sse and scope.era == "legacy" and scope.session is not None:
            return await self.resumable.run(request, message, scope, wants_json=wants_json)
        notifications: list[dict[str, Any]] = []
        try:
            response, status = await self._dispatch_buffered(request, message, scope, notifications)
        except WaitInterrupted:  # a JSON-only client cannot resume: say so, the task goes on
            response, status = jsonrpc.error_message(message.id, waits.still_running()), 200
        headers = {"mcp-session-id": scope.new_session_id} if scope.new_session_id else None
        if notifications and wants_sse or not wants_json:
            body = b"".join(sse.event(n) for n in notifications)
            if response is not None:
                body += sse.event(response)
            return sse_reply(body, status, headers)
        return json_reply(response, status, headers)

    async def _dispatch_buffered(
        self, request: Request, message: Message, scope: RequestScope, notifications: list[dict[str, Any]]
    ) -> tuple[dict[str, Any] | None, int]:
        """Run a call to its end, appending what it sends to `notifications`. A blocking wait must hand
        back before the invocation's time runs out: then `WaitInterrupted` propagates."""

        async def collect(outgoing: dict[str, Any]) -> None:
            notifications.append(outgoing)

        scope.send = collect
        scope.wait_until = waits.deadline(request.scope.get("aws.context"), self.settings.max_wait_seconds)
        return await self.dispatcher.handle(message, scope)

    async def _run_streaming(self, message: Message, scope: RequestScope, wants_json: bool) -> Response:
        session_id = scope.session.session_id if scope.session else None
        resumable = session_id is not None and versions.at_least(scope.version, "2025-11-25")
        call = LiveCall(session_id, message.id, self.events if resumable else None)
        scope.send = call.push
        scope.is_cancelled = lambda: call.cancelled
        if session_id is not None:
            timeout = self.settings.server_request_timeout_seconds

            async def server_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
                return await self.pending.ask(call, method, params, timeout)

            scope.server_request = server_request
            self.in_flight[(session_id, str(message.id))] = call
        if resumable:
            scope.close_stream = call.close_stream
            assert session_id is not None
            self.calls[(session_id, call.stream_id)] = call

        async def run() -> None:
            try:
                response, status = await self.dispatcher.handle(message, scope)
            except asyncio.CancelledError:
                response, status = None, 200
            await call.finish(response, status)
            if session_id is not None:
                self.in_flight.pop((session_id, str(message.id)), None)

        first = 0
        if resumable:
            await call.push(None)  # the priming event: an id and empty data, first on the stream
            first = 1
        call.task = asyncio.create_task(run())
        # JSON when the call ends without sending anything else; SSE once it sends a message or closes
        await call.wait(first, 0)
        if call.finished and len(call.events) <= first + 1 and wants_json:
            if session_id is not None:
                self.calls.pop((session_id, call.stream_id), None)
            headers = {"mcp-session-id": scope.new_session_id} if scope.new_session_id else None
            return json_reply(call.response, call.status, headers)
        headers = dict(sse.HEADERS)
        if scope.new_session_id:
            headers["mcp-session-id"] = scope.new_session_id
        return StreamingResponse(self._follow(call, 0, 0), media_type=sse.MEDIA_TYPE, headers=headers)

    async def _follow(self, call: LiveCall, position: int, generation: int) -> AsyncIterator[bytes]:
        """Relay a call's events from `position` until its response, or until the handler closes the stream.

        `generation` is the call's stream generation when this HTTP response was created: a close
        requested after that (even before the body starts) ends this response.
        """
        delivered = False
        try:
            while True:
                while position < len(call.events):
                    event_id, outgoing = call.events[position]
                    position += 1
                    yield sse.event(outgoing, event_id)
                    if outgoing is not None and outgoing is call.response:
                        delivered = True
                        return
                if call.finished:
                    delivered = True
                    return
                if call.generation != generation:
                    last_id = next((eid for eid, _ in reversed(call.events[:position]) if eid), None)
                    yield sse.event(None, last_id, retry_ms=self.settings.retry_ms)
                    return
                await call.wait(position, generation)
        finally:
            if delivered and call.session_id is not None:
                self.calls.pop((call.session_id, call.stream_id), None)
            elif not delivered and call.generation == generation and call.session_id is None:
                call.cancel()  # 2026: closing the response stream is cancellation

    # -- waits that outlive an invocation (buffered legacy tasks/result) -------------------
    async def _wait(self, request: Request, message: Message, scope: RequestScope, event_id: str | None) -> Response:
        """Run a blocking call until it answers or the invocation's time runs low (or it sent the client
        requests it must answer first); then end the SSE response with what it relayed, an id and
        `retry:`, for a `GET` with `Last-Event-ID` (on any instance) to resume the same wait. The id's
        event in the log holds how far the wait got (`WaitProgress`)."""
        assert scope.session is not None and message.id is not None
        session_id = scope.session.session_id
        stream = waits.stream_for(message)
        if event_id is None:
            event_id = (await self.events.append(session_id, stream, None)).event_id
        notifications: list[dict[str, Any]] = []
        body = sse.event(None, event_id)
        try:
            response, status = await self._dispatch_buffered(request, message, scope, notifications)
        except WaitInterrupted:
            progress = scope.wait_progress
            marker: dict[str, object] = {"wait": {"relayed": progress.relayed, "asked": progress.asked}}
            last = (await self.events.append(session_id, stream, marker)).event_id
            body += b"".join(sse.event(n) for n in notifications)
            body += sse.event(None, last, retry_ms=self.settings.retry_ms)
            return sse_reply(body)
        body += b"".join(sse.event(n) for n in notifications)
        if response is not None:
            body += sse.event(response)
        return sse_reply(body, status)

    async def _resume_wait(self, request: Request, session: SessionRecord, last_event_id: str) -> Response:
        message = waits.message_for(last_event_id)
        if message is None:
            return Response(status_code=405, headers={"Allow": "POST, DELETE"})
        event = await self.events.get(session.session_id, last_event_id)
        if event is None:
            return unknown_event_id()
        if await self.resumable.cancelled(session.session_id, message.id):
            return sse_reply(b"")  # no response: it was cancelled
        scope = _session_scope(session, request)
        saved = event.message.get("wait") if isinstance(event.message, dict) else None
        if isinstance(saved, dict):
            scope.wait_progress = WaitProgress(int(saved.get("relayed", 0)), list(saved.get("asked", [])))
        return await self._wait(request, message, scope, last_event_id)

    # -- GET and DELETE -------------------------------------------------------------------
    async def _get(self, request: Request) -> Response:
        if "mcp-session-id" not in request.headers:
            return Response(status_code=405, headers={"Allow": "POST"})
        found = await self._session(request, _principal(request))
        if isinstance(found, Response):
            return found
        session = found
        last_event_id = request.headers.get("last-event-id")
        if not self.streaming:
            if last_event_id and last_event_id.startswith(CALL_PREFIX):
                return await self.resumable.resume(request, _session_scope(session, request), last_event_id)
            if last_event_id and last_event_id.startswith(CHANGES_PREFIX):
                cursor = last_event_id[len(CHANGES_PREFIX) :]
                if not _is_cursor(cursor):
                    return unknown_event_id()
                return await self._change_stream(request, session, cursor)
            if last_event_id:
                return await self._resume_wait(request, session, last_event_id)
            if not self.settings.get_stream:
                return Response(status_code=405, headers={"Allow": "POST, DELETE"})
            return await self._change_stream(request, session, cursor_at(time.time()))
        if last_event_id:
            return await self._resume(session, last_event_id)
        return StreamingResponse(self._session_stream(session), media_type=sse.MEDIA_TYPE, headers=sse.HEADERS)

    async def _resume(self, session: SessionRecord, last_event_id: str) -> Response:
        stream_id = last_event_id.split(".", 1)[0]
        call = self.calls.get((session.session_id, stream_id))
        if call is not None:
            position = call.position_after(last_event_id)
            if position is not None:
                stream = self._follow(call, position, call.generation)
                return StreamingResponse(stream, media_type=sse.MEDIA_TYPE, headers=sse.HEADERS)
        replay = await self.events.after(session.session_id, last_event_id)
        if replay is None:
            return unknown_event_id()
        body = b"".join(sse.event(e.message, e.event_id) for e in replay[1] if e.message is not None)
        return sse_reply(body)

    async def _change_stream(self, request: Request, session: SessionRecord, cursor: str) -> Response:
        """The legacy GET stream on a buffered transport: the changes since `cursor` (waiting up to
        `get_stream_seconds` for the first), then an id naming where the next poll reads from and `retry:`."""
        changes = await self._poll_changes(request, cursor, self.settings.get_stream_seconds)
        body = sse.event(None, CHANGES_PREFIX + cursor)
        subscriptions = session.subscriptions
        if any(change.kind == "resource" for change in changes):
            current = await self.sessions.get(session.session_id, time.time())
            subscriptions = current.subscriptions if current is not None else set()
        wanted = {**_ALL_LISTS, "resourceSubscriptions": subscriptions}
        for change in changes:
            cursor = change.cursor
            notification = _change_notification(change.kind, change.uri, wanted)
            if notification is not None:
                body += sse.event(notification)
        body += sse.event(None, CHANGES_PREFIX + cursor, retry_ms=self.settings.retry_ms)
        return sse_reply(body)

    async def _poll_changes(self, request: Request, cursor: str, hold_seconds: float) -> list[Change]:
        """Changes after `cursor`, polling the change log (backoff to 1 s) for up to `hold_seconds`
        (and never past the invocation's budget) until there is at least one."""
        until = min(
            time.time() + hold_seconds,
            waits.deadline(request.scope.get("aws.context"), self.settings.max_wait_seconds),
        )
        delay = 0.1
        while True:
            changes = await self.changes.since(cursor, time.time())
            if changes or time.time() + delay >= until:
                return changes
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def _session_stream(self, session: SessionRecord) -> AsyncIterator[bytes]:
        """The standalone GET stream: list changes and updates of subscribed resources."""
        queue = self.app.changes.listen()
        try:
            yield b": stream open\n\n"
            while True:
                try:
                    kind, uri = await asyncio.wait_for(queue.get(), timeout=15)
                except TimeoutError:
                    yield b": keep-alive\n\n"
                    continue
                subscriptions = session.subscriptions
                if kind == "resource":
                    current = await self.sessions.get(session.session_id, time.time())
                    if current is None:
                        return
                    subscriptions = current.subscriptions
                notification = _change_notification(kind, uri, {**_ALL_LISTS, "resourceSubscriptions": subscriptions})
                if notification is not None:
                    yield sse.event(notification)
        finally:
            self.app.changes.close(queue)

    async def _delete(self, request: Request) -> Response:
        if "mcp-session-id" not in request.headers:
            if request.headers.get("mcp-protocol-version", "").strip() in versions.MODERN_VERSIONS:
                return Response(status_code=405, headers={"Allow": "POST"})
            return error_reply(400, INVALID_REQUEST, "Bad Request: missing MCP-Session-Id header")
        found = await self._session(request, _principal(request))
        if isinstance(found, Response):
            return found
        await self.sessions.terminate(found.session_id)
        for key, call in list(self.in_flight.items()):
            if key[0] == found.session_id:
                call.cancel()
        return Response(status_code=200)
