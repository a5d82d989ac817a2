"""`StreamingTransport`: the endpoint of a long-lived server (`lambda-mcp dev`, uvicorn), where a call
keeps running between HTTP requests and its SSE stream carries what it sends as it happens.

- a call that may send messages is a `LiveCall`: JSON when it ends without sending anything, a live
  SSE stream otherwise; on 2025-11-25 sessions the stream's events have ids and a priming event, the
  handler may close the stream (`ctx.close_sse_stream()`) and the client resumes with `Last-Event-ID`;
- server-to-client requests go out on the call's stream and wait for the client's response POST;
- `subscriptions/listen` and the legacy GET stream follow the in-process change feed;
- closing a 2026 response cancels its call;
- a quiet stream carries keep-alive comments; behind the Lambda Web Adapter every stream ends before
  the invocation does (`deadline.stream_deadline`): a resumable call's stream with `retry:` (the call
  goes on), any other call's with an error response (the call is cancelled), listen and GET streams
  simply end (the client reconnects).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from ..auth.guard import Denied
from ..config import Settings
from ..dispatch.context import Channel
from ..dispatch.dispatcher import Dispatcher
from ..protocol import jsonrpc, revisions
from ..protocol.errors import INTERNAL_ERROR
from ..protocol.ids import ChangesCursor, InputId, LiveInputId
from ..protocol.jsonrpc import RequestId
from ..protocol.names import SUBSCRIPTION_ID
from ..server.app import MCPApp
from ..storage.ports import EventLog, SessionStore
from ..storage.records import SessionRecord
from . import changes, sse
from .deadline import quiet_seconds, stream_deadline
from .inbound import Call, Listen, Resume
from .live import LiveCall, PendingRequests
from .oneshot import run_to_end
from .replies import json_reply, sse_reply, unknown_event_id


def _stream(events: AsyncIterator[bytes], headers: dict[str, str] | None = None) -> StreamingResponse:
    return StreamingResponse(events, media_type=sse.MEDIA_TYPE, headers={**sse.HEADERS, **(headers or {})})


class StreamingTransport:
    def __init__(self, dispatcher: Dispatcher, sessions: SessionStore, events: EventLog, settings: Settings) -> None:
        self.dispatcher = dispatcher
        self.app: MCPApp = dispatcher.app
        self.sessions = sessions
        self.events = events
        self.settings = settings
        self.calls: dict[tuple[str, str], LiveCall] = {}
        """Resumable calls by (session, stream): what a `Last-Event-ID` can resume."""
        self.in_flight: dict[tuple[str, str], LiveCall] = {}
        """Running calls by (session, request id): what `notifications/cancelled` and DELETE stop."""
        self.pending = PendingRequests()
        self.keep_alive = sse.keep_alive_seconds()

    async def call(self, http: Request, call: Call) -> Response:
        if not call.accepts.sse:
            return await run_to_end(self.dispatcher, http, call, self.settings)
        message, context = call.message, call.context
        session_id = context.session.session_id if context.session else None
        resumable = session_id is not None and revisions.has_resumable_streams(context.version)
        live = LiveCall(session_id, message.id, self.events if resumable else None)
        live.scopes = self.app.scopes_for(message.method or "", message.params or {})
        channel = Channel(send=live.push, is_cancelled=lambda: live.cancelled)
        if session_id is not None:
            timeout = self.settings.server_request_timeout_seconds

            async def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
                return await self.pending.ask(live, method, params, timeout)

            channel.ask = ask
            self.in_flight[(session_id, str(message.id))] = live
        if resumable:
            assert session_id is not None
            channel.close_stream = live.close_stream
            self.calls[(session_id, live.stream_id)] = live

        async def run() -> None:
            opened = None
            try:
                answer = await self.dispatcher.handle(message, context, channel)
                response, status = answer.response, answer.status
                opened = answer.session.session_id if answer.session else None
            except asyncio.CancelledError:
                response, status = None, 200
            await live.finish(response, status, opened)
            if session_id is not None:
                self.in_flight.pop((session_id, str(message.id)), None)

        first = 0
        if resumable:
            await live.push(None)  # the priming event: an id and empty data, first on an SSE stream
            first = 1
        live.task = asyncio.create_task(run())
        # JSON when the call ends without sending anything else; SSE once it sends a message or closes, or
        # once it stayed quiet for a keep-alive interval (the stream then carries keep-alive comments)
        until = stream_deadline(http.scope)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(live.wait(first, 0), self._quiet(until))
        headers = {"mcp-session-id": live.opened} if live.opened else None
        if live.finished and len(live.events) <= first + 1 and call.accepts.json:
            if session_id is not None:
                self.calls.pop((session_id, live.stream_id), None)
            return json_reply(live.response, live.status, headers)  # nothing was logged: no storage write
        await live.commit()
        return _stream(self._follow(live, 0, 0, until), headers)

    async def _follow(
        self, live: LiveCall, position: int, generation: int, until: float | None = None
    ) -> AsyncIterator[bytes]:
        """Relay a call's events from `position` until its response, until the handler closes the stream,
        or until `until` (an epoch time; None: no limit), with keep-alive comments while it is quiet.

        `generation` is the call's stream generation when this HTTP response was created: a close
        requested after that (even before the body starts) ends this response.
        """
        delivered = False
        try:
            if position >= len(live.events) and not live.finished:
                yield sse.KEEP_ALIVE  # nothing to send yet: the first bytes, before any idle timeout counts
            while True:
                while position < len(live.events):
                    event_id, outgoing = live.events[position]
                    position += 1
                    yield sse.event(outgoing, event_id)
                    if outgoing is not None and outgoing is live.response:
                        delivered = True
                        return
                if live.finished:
                    delivered = True
                    return
                if live.generation != generation:
                    yield self._retry(live, position)
                    return
                if until is not None and time.time() >= until:
                    yield self._out_of_time(live, position)
                    return
                try:
                    await asyncio.wait_for(live.wait(position, generation), self._quiet(until))
                except TimeoutError:
                    if until is None or time.time() < until:
                        yield sse.KEEP_ALIVE
        finally:
            if delivered and live.session_id is not None:
                self.calls.pop((live.session_id, live.stream_id), None)
            elif not delivered and live.generation == generation and live.session_id is None:
                live.cancel()  # 2026: closing the response stream is cancellation

    def _quiet(self, until: float | None) -> float:
        return quiet_seconds(self.keep_alive, until)

    def _retry(self, live: LiveCall, position: int) -> bytes:
        """The end of a call's stream the client resumes from: `retry:` after the last event id it got."""
        last_id = next((eid for eid, _ in reversed(live.events[:position]) if eid), None)
        return sse.event(None, last_id, retry_ms=self.settings.retry_ms)

    def _out_of_time(self, live: LiveCall, position: int) -> bytes:
        """The last bytes of a call's stream at the invocation's deadline: `retry:` after the last event id
        when the client can resume it (the call goes on), else an error response (the call is cancelled)."""
        if live.resumable:
            return self._retry(live, position)
        live.cancel()
        message = "The call did not finish before the function's timeout (its stream had to end)"
        return sse.event(jsonrpc.error_message(live.request_id, {"code": INTERNAL_ERROR, "message": message}))

    async def listen(self, http: Request, listen: Listen) -> Response:
        meta = {SUBSCRIPTION_ID: listen.message.id}
        ack = jsonrpc.notification(
            "notifications/subscriptions/acknowledged", {"notifications": listen.honoured, "_meta": meta}
        )

        until = stream_deadline(http.scope)

        async def stream() -> AsyncIterator[bytes]:
            yield sse.event(ack)
            async for change in changes.follow(self.app.changes, self.keep_alive, until):
                if change is None:
                    yield sse.KEEP_ALIVE
                    continue
                notification = changes.notification_for(change, listen.honoured, listen.principal, meta)
                if notification is not None:
                    yield sse.event(notification)

        return _stream(stream())

    async def resume(self, http: Request, resume: Resume) -> Response:
        """A legacy GET: the session's stream of changes, or the rest of a call after a `Last-Event-ID`
        (live if the call still runs here, else replayed from the event log)."""
        last, session = resume.last, resume.session
        if last is None:
            return _stream(self._session_stream(session, resume.context.scopes, stream_deadline(http.scope)))
        if isinstance(last, ChangesCursor):
            return unknown_event_id()  # only buffered GET streams mint change cursors
        live = self.calls.get((session.session_id, last.stream))
        scopes = resume.context.scopes
        if live is not None and scopes is not None and not live.scopes <= scopes:
            # the same principal with a token that may not use what the call reaches (a call delivered
            # already, replayed below from the log, gives the client nothing it did not have)
            raise Denied(403, "the token lacks a scope this operation needs", "insufficient_scope", live.scopes)
        if live is not None:
            position = live.position_after(last.format())
            if position is not None:
                return _stream(self._follow(live, position, live.generation, stream_deadline(http.scope)))
        replay = await self.events.after(session.session_id, last.format())
        if replay is None:
            return unknown_event_id()
        return sse_reply(b"".join(sse.event(e.message, e.event_id) for e in replay[1] if e.message is not None))

    async def _session_stream(
        self, session: SessionRecord, scopes: frozenset[str] | None, until: float | None
    ) -> AsyncIterator[bytes]:
        """The standalone GET stream: list changes and updates of subscribed resources, until `until` (then
        with `retry:`: the client opens it again)."""
        yield b": stream open\n\n"
        async for change in changes.follow(self.app.changes, self.keep_alive, until):
            if change is None:
                yield sse.KEEP_ALIVE
                continue
            subscriptions = session.subscriptions
            if change.kind == "resource":
                current = await self.sessions.get(session.session_id, time.time())
                if current is None:
                    return
                subscriptions = current.subscriptions
            wanted = changes.every_list(changes.readable(self.app, subscriptions, scopes), session.session_id)
            notification = changes.notification_for(change, wanted, session.principal)
            if notification is not None:
                yield sse.event(notification)
        yield sse.retry_only(self.settings.retry_ms)  # reached `until`: the client opens the stream again

    async def answer(self, session_id: str, answered: InputId, response: dict[str, Any]) -> None:
        if isinstance(answered, LiveInputId):
            self.pending.resolve(session_id, response)

    async def cancel(self, session_id: str, request_id: RequestId) -> None:
        live = self.in_flight.get((session_id, str(request_id)))
        if live is not None:
            live.cancel()

    def close(self, session_id: str) -> None:
        """The session ended: stop its running calls."""
        for key, live in list(self.in_flight.items()):
            if key[0] == session_id:
                live.cancel()
