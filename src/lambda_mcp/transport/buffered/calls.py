"""Suspended legacy calls: a call that outlives a buffered invocation is suspended, recorded, and re-run
when the client resumes.

On a buffered transport (API Gateway in front of Lambda) a response reaches the client only once it
ends, so a legacy handler that asks the client something (`ctx.elicit`, `ctx.sample`,
`ctx.list_roots`) or closes its stream (`ctx.close_sse_stream`) cannot wait in the invocation. Its
run ends with `CallSuspended` instead (raised by its `dispatch.rounds.BufferedRound`), and this module
1. **suspends**: ends the response with a priming event id, what the run sent beyond what earlier
   responses carried (its `Outbox`), the requests to the client (also written to the session's event
   log) and a last id'd event with `retry:`;
2. **records** the call before the response is returned (`CallRecord`: the request as a re-run needs
   it, how many messages were delivered, the stream closes passed, the keys awaited);
3. **stores answers**: the client's response POSTs land on any instance, and each is kept under the
   key it answers (only keys the call awaits);
4. **re-runs**: the client's `GET` with `Last-Event-ID` reaches any instance, which waits briefly for
   missing answers, checks the caller may still reach what the call does, and runs the call again from
   the top with a `Recorded` built from the record.

A call running here also watches for a `notifications/cancelled` that landed on another instance
(a durable flag on the call's record, read once a second after the first second).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...auth.guard import Denied
from ...config import Settings
from ...dispatch.context import Channel, RequestContext
from ...dispatch.dispatcher import Dispatcher
from ...dispatch.rounds import BufferedRound, Outbox, Recorded
from ...observe.invocation import count
from ...polling import Backoff
from ...protocol import jsonrpc
from ...protocol.errors import INVALID_PARAMS, MCPError
from ...protocol.ids import CallInputId, CallStream
from ...protocol.jsonrpc import Message, RequestId
from ...protocol.limits import MAX_RECORDED_ANSWERS_BYTES
from ...server.suspensions import CallSuspended, WaitInterrupted
from ...storage.errors import ConflictError, StorageError
from ...storage.ports import CallStore, EventLog
from ...storage.records import CallRecord
from .. import sse
from ..deadline import deadline, still_running
from ..replies import json_reply, sse_reply, unknown_event_id

logger = logging.getLogger("lambda_mcp")

ANSWER_WAIT_SECONDS = 5.0
"""How long a resumption waits for answers still missing (clients often GET before their answer POST lands)."""
CANCEL_CHECK_SECONDS = 1.0


class _Run:
    """One run of a call: its request, what earlier runs recorded, what this one sends, and its cancel flag."""

    def __init__(self, message: Message, context: RequestContext, record: CallRecord | None) -> None:
        assert context.session is not None and message.id is not None
        self.message = message
        self.session_id = context.session.session_id
        self.call_stream = CallStream(message.id)
        self.stream = self.call_stream.format()
        self.record = record
        self.nonce = record.nonce if record is not None else secrets.token_urlsafe(16)
        self.started = record.created_at if record is not None else time.time()
        recorded = (
            Recorded(dict(record.answers), record.delivered, record.checkpoints) if record is not None else Recorded()
        )
        self.round = BufferedRound(self.call_stream, self.nonce, recorded)
        self.outgoing: list[dict[str, Any]] = []
        self.outbox = Outbox(self._collect, recorded.delivered)
        self.cancelled = False

    async def _collect(self, message: dict[str, Any]) -> None:
        self.outgoing.append(message)


class SuspendedCalls:
    def __init__(self, dispatcher: Dispatcher, calls: CallStore, events: EventLog, settings: Settings) -> None:
        self.dispatcher = dispatcher
        self.calls = calls
        self.events = events
        self.settings = settings

    # -- running ---------------------------------------------------------------------------
    async def run(
        self,
        http: Request,
        message: Message,
        context: RequestContext,
        record: CallRecord | None = None,
        *,
        wants_json: bool = False,
    ) -> Response:
        """Run (or re-run, with `record`) a legacy call on a session; answer with its result, or suspend it."""
        run = _Run(message, context, record)
        channel = Channel(
            send=run.outbox.send,
            round=run.round,
            close_stream=run.round.checkpoint,
            is_cancelled=lambda: run.cancelled,
            deadline=deadline(http.scope, self.settings.max_wait_seconds),
        )
        handling = asyncio.ensure_future(self.dispatcher.handle(message, context, channel))
        request = jsonrpc.replayable(message.raw)
        watched = record or CallRecord(run.session_id, run.stream, "", request, run.started, 0.0)
        watcher = asyncio.ensure_future(self._watch(handling, run, watched))
        try:
            try:
                answer = await handling
            finally:  # the watcher stops (and its marker is written) before anything else is
                watcher.cancel()
                await asyncio.gather(watcher, return_exceptions=True)
            response, status = answer.response, answer.status
        except asyncio.CancelledError:
            if not run.cancelled:
                raise
            return sse_reply(b"")  # cancelled by the client: no response for the request
        except CallSuspended as suspended:
            count("CallsSuspended")
            return await self._suspend(run, suspended)
        except WaitInterrupted:
            response, status = jsonrpc.error_message(message.id, still_running()), 200
        if record is None:  # it never suspended: answered like any buffered call
            if run.outgoing or not wants_json:
                return sse_reply(sse.body(run.outgoing, response), status)
            return json_reply(response, status)
        record.response, record.delivered = response, run.outbox.reached
        with contextlib.suppress(ConflictError):  # a concurrent resumption finished it too: both answer the same
            await self.calls.save(record)
        return await self._body(run.session_id, run.stream, run.outgoing, response, status)

    async def _suspend(self, run: _Run, suspended: CallSuspended) -> Response:
        """Record the suspended call (durable before the client sees its requests) and end the response."""
        record = run.record
        if record is None:
            expires = time.time() + self.settings.session_ttl_seconds
            request = jsonrpc.replayable(run.message.raw)
            record = CallRecord(run.session_id, run.stream, run.nonce, request, run.started, expires)
            record.delivered, record.checkpoints = run.outbox.reached, suspended.checkpoints
            record.awaiting = list(suspended.awaiting)
            record = await self.calls.start(record)
        else:
            record.delivered = run.outbox.reached
            record.checkpoints = max(record.checkpoints, suspended.checkpoints)
            record.awaiting = list(suspended.awaiting)
            try:
                record = await self.calls.save(record)
            except ConflictError:  # another resumption of the same call saved first: it sends these
                return await self._body(run.session_id, run.stream, [], None)
        if record.cancelled:
            return sse_reply(b"")
        return await self._body(run.session_id, run.stream, run.outgoing, None)

    async def _body(
        self,
        session_id: str,
        stream: str,
        outgoing: list[dict[str, Any]],
        response: dict[str, Any] | None,
        status: int = 200,
    ) -> Response:
        """A priming event id first; requests to the client carry ids (and are logged); then the
        response, or (suspended) a last id'd event with `retry:` for the client to resume from."""
        last = (await self.events.append(session_id, stream, None)).event_id
        body = sse.event(None, last)
        for outgoing_message in outgoing:
            if "id" in outgoing_message:
                last = (await self.events.append(session_id, stream, outgoing_message)).event_id
                body += sse.event(outgoing_message, last)
            else:
                body += sse.event(outgoing_message)
        if response is None:
            body += sse.event(None, last, retry_ms=self.settings.retry_ms)
        else:
            body += sse.event(response)
        return sse_reply(body, status)

    async def _watch(self, handling: asyncio.Future[Any], run: _Run, call: CallRecord) -> None:
        """Stop the run when a `notifications/cancelled` for it landed on any instance. A call still running
        after its first second leaves a marker (`call` without a nonce) for such a cancel to find: a cancel
        for a request id nobody knows writes nothing."""
        try:
            await asyncio.sleep(CANCEL_CHECK_SECONDS)
            if not call.nonce and not handling.done():
                await self.mark(call)
            while not handling.done():
                fresh = await self.calls.get(call.session_id, call.stream_id, time.time())
                if fresh is not None and fresh.cancelled_at >= call.created_at:
                    run.cancelled = True
                    handling.cancel()
                    return
                await asyncio.sleep(CANCEL_CHECK_SECONDS)
        except StorageError:
            logger.warning("could not check call %s for cancellation", call.stream_id, exc_info=True)

    async def mark(self, call: CallRecord) -> None:
        """Leave a marker for a call (or wait) of this session, so that a cancel naming its request id finds it."""
        marker = call.replace(expires_at=time.time() + self.settings.session_ttl_seconds)
        await self.calls.start(marker)

    # -- the client's side: resumptions, answers, cancellations ----------------------------
    async def resume(self, http: Request, context: RequestContext, stream: CallStream, event_id: str) -> Response:
        """A `GET` with `Last-Event-ID` for a suspended call: wait briefly for missing answers, then re-run."""
        assert context.session is not None
        session_id = context.session.session_id
        name = stream.format()
        record = None
        if await self.events.get(session_id, event_id) is not None:
            record = await self.calls.get(session_id, name, time.time())
        if record is None or not record.nonce:
            return unknown_event_id()
        if record.response is not None:
            return await self._body(session_id, name, [], record.response)
        until = min(time.time() + ANSWER_WAIT_SECONDS, deadline(http.scope, self.settings.max_wait_seconds))
        backoff = Backoff(until, limit=0.5)
        while not record.cancelled and any(key not in record.answers for key in record.awaiting):
            if not await backoff.sleep():
                return await self._body(session_id, name, [], None)  # poll again after `retry`
            fresh = await self.calls.get(session_id, name, time.time())
            if fresh is None:
                return unknown_event_id()
            record = fresh
        if record.cancelled:
            return sse_reply(b"")
        try:
            message = jsonrpc.classify(record.request)
        except MCPError:
            return unknown_event_id()
        unmet = self.dispatcher.app.unmet_scopes(context.scopes, message.method or "", message.params or {})
        if unmet:  # the same principal, now with a token that may not use what the call reaches: no re-run
            raise Denied(403, "the token lacks a scope this operation needs", "insufficient_scope", unmet)
        count("CallsResumed")
        return await self.run(http, message, context.replace(request_id=message.id), record)

    async def answer(self, session_id: str, answered: CallInputId, response: dict[str, Any]) -> bool:
        """Store the client's response to one of our requests; False if it answers none of this session's
        (or a request the call does not await). An answer that would take the call's answers over
        `MAX_RECORDED_ANSWERS_BYTES` is stored as a client error, which the handler sees on its re-run."""
        stream = answered.stream.format()
        record = await self.calls.get(session_id, stream, time.time())
        if record is None or record.nonce != answered.nonce or answered.key not in record.awaiting:
            return False
        size = len(json.dumps([record.answers, response], separators=(",", ":")))
        if size > MAX_RECORDED_ANSWERS_BYTES:
            message = f"The call's answers would take more than {MAX_RECORDED_ANSWERS_BYTES} bytes"
            response = jsonrpc.error_message(response.get("id"), {"code": INVALID_PARAMS, "message": message})
        return await self.calls.answer(session_id, stream, answered.nonce, answered.key, response)

    async def cancelled(self, session_id: str, request_id: RequestId) -> bool:
        """Whether a `notifications/cancelled` for this request id arrived (on any instance)."""
        record = await self.calls.get(session_id, CallStream(request_id).format(), time.time())
        return record is not None and record.cancelled_at > 0
