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
import logging
import secrets
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..config import Settings
from ..dispatch.dispatcher import Dispatcher
from ..dispatch.scope import RequestScope, Resumption, WaitInterrupted
from ..protocol import b64url, jsonrpc
from ..protocol.errors import MCPError
from ..protocol.jsonrpc import Message
from ..server.context import CallSuspended
from ..storage.errors import ConflictError, StorageError
from ..storage.ports import CallStore, EventLog
from ..storage.records import CallRecord
from . import sse, waits
from .replies import json_reply, sse_reply, unknown_event_id

logger = logging.getLogger("lambda_mcp")

PREFIX = "call~"
ANSWER_WAIT_SECONDS = 5.0
"""How long a resumption waits for answers still missing (clients often GET before their answer POST lands)."""
CANCEL_CHECK_SECONDS = 1.0


def stream_for(request_id: object) -> str:
    """`call~<request id as base64url JSON>`: found again from the id alone (for cancellation)."""
    return PREFIX + b64url.encode_request_id(request_id)


def request_id_for(stream: str, key: str, nonce: str) -> str:
    """The id of a request to the client: its call, its input key and the call's random nonce."""
    return f"srv.{stream}.{b64url.encode_text(key)}.{nonce}"


def parse_request_id(request_id: object) -> tuple[str, str, str] | None:
    """(stream, key, nonce) of an id made by `request_id_for`, else None."""
    if not isinstance(request_id, str) or not request_id.startswith("srv."):
        return None
    parts = request_id.split(".")
    key = b64url.decode_text(parts[2]) if len(parts) == 4 and parts[1].startswith(PREFIX) else None
    return None if key is None else (parts[1], key, parts[3])


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
        request: Request,
        message: Message,
        scope: RequestScope,
        record: CallRecord | None = None,
        *,
        wants_json: bool = False,
    ) -> Response:
        """Run (or re-run, with `record`) a legacy call on a session; answer with its result, or suspend it."""
        assert scope.session is not None and message.id is not None
        session_id = scope.session.session_id
        stream = stream_for(message.id)
        nonce = record.nonce if record is not None else secrets.token_urlsafe(16)
        started = record.created_at if record is not None else time.time()
        run = _Run(record.delivered if record is not None else 0)
        resumption = Resumption(
            answers=dict(record.answers) if record is not None else {},
            request_id_for=lambda key: request_id_for(stream, key, nonce),
            checkpoints=record.checkpoints if record is not None else 0,
        )

        async def checkpoint() -> None:
            resumption.passed += 1
            if resumption.passed > resumption.checkpoints:
                raise CallSuspended()

        scope.send, scope.resumption, scope.close_stream = run.send, resumption, checkpoint
        scope.is_cancelled = lambda: run.cancelled
        scope.wait_until = waits.deadline(request.scope.get("aws.context"), self.settings.max_wait_seconds)
        handling = asyncio.ensure_future(self.dispatcher.handle(message, scope))
        watcher = asyncio.ensure_future(self._watch(session_id, stream, started, handling, run))
        try:
            response, status = await handling
        except asyncio.CancelledError:
            if not run.cancelled:
                raise
            return sse_reply(b"")  # cancelled by the client: no response for the request
        except CallSuspended:
            return await self._suspend(session_id, stream, message, record, run, resumption, nonce, started)
        except WaitInterrupted:
            response, status = jsonrpc.error_message(message.id, waits.still_running()), 200
        finally:
            watcher.cancel()
        if record is None:  # it never suspended: answered like any buffered call
            if run.outgoing or not wants_json:
                body = b"".join(sse.event(n) for n in run.outgoing)
                return sse_reply(body + (sse.event(response) if response is not None else b""), status)
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
                message.raw,
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

    async def _watch(
        self, session_id: str, stream: str, started: float, handling: asyncio.Future[Any], run: _Run
    ) -> None:
        """Stop the run when a `notifications/cancelled` for it landed on any instance."""
        try:
            while not handling.done():
                await asyncio.sleep(CANCEL_CHECK_SECONDS)
                fresh = await self.calls.get(session_id, stream, time.time())
                if fresh is not None and fresh.cancelled_at >= started:
                    run.cancelled = True
                    handling.cancel()
                    return
        except StorageError:
            logger.warning("could not check call %s for cancellation", stream, exc_info=True)

    # -- the client's side: resumptions, answers, cancellations ----------------------------
    async def resume(self, request: Request, scope: RequestScope, last_event_id: str) -> Response:
        """A `GET` with `Last-Event-ID` for a suspended call: wait briefly for missing answers, then re-run."""
        assert scope.session is not None
        session_id = scope.session.session_id
        stream = last_event_id.split(".", 1)[0]
        record = None
        if await self.events.get(session_id, last_event_id) is not None:
            record = await self.calls.get(session_id, stream, time.time())
        if record is None or not record.nonce:
            return unknown_event_id()
        if record.response is not None:
            return await self._body(session_id, stream, [], record.response)
        wait_until = min(
            time.time() + ANSWER_WAIT_SECONDS,
            waits.deadline(request.scope.get("aws.context"), self.settings.max_wait_seconds),
        )
        delay = 0.05
        while not record.cancelled and any(key not in record.answers for key in record.awaiting):
            if time.time() + delay >= wait_until:
                return await self._body(session_id, stream, [], None)  # poll again after `retry`
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)
            fresh = await self.calls.get(session_id, stream, time.time())
            if fresh is None:
                return unknown_event_id()
            record = fresh
        if record.cancelled:
            return sse_reply(b"")
        try:
            message = jsonrpc.classify(record.request)
        except MCPError:
            return unknown_event_id()
        return await self.run(request, message, scope, record)

    async def answer(self, session_id: str, response: dict[str, Any]) -> bool:
        """Store the client's response to one of our requests; False if it answers none of this session's."""
        parsed = parse_request_id(response.get("id"))
        if parsed is None:
            return False
        stream, key, nonce = parsed
        return await self.calls.answer(session_id, stream, nonce, key, response)

    async def cancelled(self, session_id: str, request_id: object) -> bool:
        """Whether a `notifications/cancelled` for this request id arrived (on any instance)."""
        record = await self.calls.get(session_id, stream_for(request_id), time.time())
        return record is not None and record.cancelled_at > 0

    async def cancel(self, session_id: str, request_id: object) -> None:
        """`notifications/cancelled`: flag the call, wherever it runs or waits."""
        now = time.time()
        await self.calls.cancel(session_id, stream_for(request_id), now, now + self.settings.session_ttl_seconds)
