"""Legacy calls that outlive a buffered invocation: suspend, record, and re-run when the client resumes.

On a buffered transport (API Gateway in front of Lambda) a response reaches the client only once it
ends, so a legacy handler that asks the client something (`ctx.elicit`, `ctx.sample`,
`ctx.list_roots`) or closes its stream (`ctx.close_sse_stream`) cannot wait in the invocation. The
call suspends instead: the response carries a priming event id, the notifications so far, the
requests (also written to the session's event log) and a last id'd event with `retry:`, and the
call is recorded (`CallRecord`) before the response is returned. The client's answers arrive as
response POSTs on any instance and are stored by input key; its `GET` with `Last-Event-ID` reaches
any instance, which re-runs the call from the top with the recorded answers. Each run numbers what
it sends, so messages an earlier response carried are not sent again.

A call running here also watches for a `notifications/cancelled` that landed on another instance
(a durable flag on the call's record, read once a second after the first second).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import secrets
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..auth.guard import Denied
from ..config import Settings
from ..dispatch.context import Channel, RequestContext, Resumption, WaitInterrupted
from ..dispatch.dispatcher import Dispatcher
from ..observe.invocation import count
from ..polling import Backoff
from ..protocol import jsonrpc
from ..protocol.errors import INVALID_PARAMS, MCPError
from ..protocol.ids import CallInputId, CallStream
from ..protocol.jsonrpc import Message, RequestId
from ..protocol.limits import MAX_RECORDED_ANSWERS_BYTES
from ..server.context import CallSuspended
from ..storage.errors import ConflictError, StorageError
from ..storage.ports import CallStore, EventLog
from ..storage.records import CallRecord
from . import sse
from .replies import json_reply, sse_reply, unknown_event_id
from .waits import deadline, still_running

logger = logging.getLogger("lambda_mcp")

ANSWER_WAIT_SECONDS = 5.0
"""How long a resumption waits for answers still missing (clients often GET before their answer POST lands)."""
CANCEL_CHECK_SECONDS = 1.0


class _Run:
    """One run of a call: what it sends beyond what earlier runs delivered, and its cancellation flag."""

    def __init__(self, skip: int) -> None:
        self.skip = skip
        self.sent = 0
        self.outgoing: list[dict[str, Any]] = []
        self.cancelled = False

    async def send(self, message: dict[str, Any]) -> None:
        if self.sent >= self.skip:
            self.outgoing.append(message)
        self.sent += 1


class ResumableCalls:
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
        assert context.session is not None and message.id is not None
        session_id = context.session.session_id
        call_stream = CallStream(message.id)
        stream = call_stream.format()
        nonce = record.nonce if record is not None else secrets.token_urlsafe(16)
        started = record.created_at if record is not None else time.time()
        run = _Run(record.delivered if record is not None else 0)
        resumption = Resumption(
            answers=dict(record.answers) if record is not None else {},
            request_id_for=lambda key: CallInputId(call_stream, key, nonce).format(),
            checkpoints=record.checkpoints if record is not None else 0,
        )

        async def checkpoint() -> None:
            resumption.passed += 1
            if resumption.passed > resumption.checkpoints:
                raise CallSuspended()

        channel = Channel(
            send=run.send,
            resumption=resumption,
            close_stream=checkpoint,
            is_cancelled=lambda: run.cancelled,
            deadline=deadline(http, self.settings.max_wait_seconds),
        )
        handling = asyncio.ensure_future(self.dispatcher.handle(message, context, channel))
        request = jsonrpc.replayable(message.raw)
        watched = record if record is not None else CallRecord(session_id, stream, "", request, started, 0.0)
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
        except CallSuspended:
            count("CallsSuspended")
            return await self._suspend(session_id, stream, message, record, run, resumption, nonce, started)
        except WaitInterrupted:
            response, status = jsonrpc.error_message(message.id, still_running()), 200
        if record is None:  # it never suspended: answered like any buffered call
            if run.outgoing or not wants_json:
                return sse_reply(sse.body(run.outgoing, response), status)
            return json_reply(response, status)
        record.response, record.delivered = response, max(record.delivered, run.sent)
        with contextlib.suppress(ConflictError):  # a concurrent resumption finished it too: both answer the same
            await self.calls.save(record)
        return await self._body(session_id, stream, run.outgoing, response, status)

    async def _suspend(
        self,
        session_id: str,
        stream: str,
        message: Message,
        record: CallRecord | None,
        run: _Run,
        resumption: Resumption,
        nonce: str,
        started: float,
    ) -> Response:
        """Record the suspended call (durable before the client sees its requests) and end the response."""
        now = time.time()
        if record is None:
            record = CallRecord(
                session_id,
                stream,
                nonce,
                jsonrpc.replayable(message.raw),
                started,
                now + self.settings.session_ttl_seconds,
                delivered=run.sent,
                checkpoints=resumption.passed,
                awaiting=resumption.awaiting,
            )
            record = await self.calls.start(record)
        else:
            record.delivered = max(record.delivered, run.sent)
            record.checkpoints = max(record.checkpoints, resumption.passed)
            record.awaiting = resumption.awaiting
            try:
                record = await self.calls.save(record)
            except ConflictError:  # another resumption of the same call saved first: it sends these
                return await self._body(session_id, stream, [], None)
        if record.cancelled:
            return sse_reply(b"")
        return await self._body(session_id, stream, run.outgoing, None)

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
        marker = dataclasses.replace(call, expires_at=time.time() + self.settings.session_ttl_seconds)
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
        backoff = Backoff(
            min(time.time() + ANSWER_WAIT_SECONDS, deadline(http, self.settings.max_wait_seconds)), limit=0.5
        )
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
        return await self.run(http, message, context, record)

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
