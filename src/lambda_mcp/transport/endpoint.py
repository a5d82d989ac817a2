"""The `/mcp` endpoint (ASGI): the front reads each request into a typed `Inbound`, and one of two
transports with the same interface serves it: `StreamingTransport` (a long-lived server) or
`BufferedTransport` (API Gateway and Lambda). docs/architecture.md follows a request through both.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..auth.guard import Denied
from ..dispatch.context import Channel
from ..dispatch.dispatcher import Dispatcher
from ..protocol import jsonrpc
from ..protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, MCPError
from ..protocol.ids import CallStream, InputId, TaskInputId, parse_input_id
from ..protocol.jsonrpc import RequestId
from ..server.changes import publishing_to
from ..storage.errors import StorageUnavailable
from ..storage.ports import CallStore, ChangeLog, SessionStore
from ..storage.records import SessionRecord
from .front import Front
from .inbound import (
    Answered,
    Batch,
    Call,
    Cancel,
    ClientResponse,
    Listen,
    Resume,
    accepted,
    cancelled_request,
    kept_alive,
)
from .replies import error_reply, unavailable
from .request import McpRequest

logger = logging.getLogger("lambda_mcp")


class Transport(Protocol):
    """How calls run and what a GET resumes, on one kind of server."""

    async def call(self, http: Request, call: Call) -> Response: ...

    async def listen(self, http: Request, listen: Listen) -> Response: ...

    async def resume(self, http: Request, resume: Resume) -> Response: ...

    async def answer(self, session_id: str, answered: InputId, response: dict[str, Any]) -> None:
        """A client's response to one of this transport's requests to it."""

    async def cancel(self, session_id: str, request_id: RequestId) -> None:
        """Stop the session's call with this id if it runs in this process (its durable flag is set already)."""

    def close(self, session_id: str) -> None:
        """The session was deleted: stop what still runs for it."""


class MCPEndpoint:
    def __init__(
        self,
        front: Front,
        transport: Transport,
        dispatcher: Dispatcher,
        sessions: SessionStore,
        calls: CallStore,
        changes: ChangeLog,
    ) -> None:
        self.front = front
        self.transport = transport
        self.dispatcher = dispatcher
        self.sessions = sessions
        self.calls = calls
        """Where a `notifications/cancelled` flags the request it names, for every instance to see."""
        self.changes = changes
        """Where changes published while serving a request go, for every instance to see."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = McpRequest(scope, receive)
        try:
            with publishing_to(self.changes):
                response = await self._serve(request)
        except Denied as denied:  # refused past the front (a resumed call reaching beyond the token's scopes)
            response = self.front.access.refuse(request, denied)
        except StorageUnavailable:  # storage throttled or down after its client's retries: the client retries
            logger.warning("storage unavailable serving %s %s", request.method, request.url.path, exc_info=True)
            response = unavailable()
        except Exception:  # the last line of defence: never a stack trace on the wire
            logger.exception("unhandled error in the MCP endpoint")
            response = error_reply(500, INTERNAL_ERROR, "Internal error")
        await response(scope, receive, send)

    async def _serve(self, request: Request) -> Response:
        inbound = await self.front.read(request)
        if isinstance(inbound, Answered):
            return inbound.response
        await self._touch(kept_alive(inbound))
        if isinstance(inbound, Call):
            return await self.transport.call(request, inbound)
        if isinstance(inbound, Listen):
            return await self.transport.listen(request, inbound)
        if isinstance(inbound, Resume):
            return await self.transport.resume(request, inbound)
        if isinstance(inbound, ClientResponse):
            await self._answer(inbound)
            return accepted()
        if isinstance(inbound, Cancel):
            await self._cancel(inbound)
            return accepted()
        if isinstance(inbound, Batch):
            return await self._batch(inbound)
        await self.sessions.terminate(inbound.session.session_id)
        self.transport.close(inbound.session.session_id)
        return Response(status_code=200)

    async def _touch(self, session: SessionRecord | None) -> None:
        """Slide a live session's expiry, at most once per `session_touch_seconds` (one write, not one a request)."""
        settings, now = self.front.settings, time.time()
        if session is not None and now - session.touched_at >= settings.session_touch_seconds:
            await self.sessions.touch(session.session_id, now, now + settings.session_ttl_seconds)

    async def _answer(self, answer: ClientResponse) -> None:
        """The client's response to a server-to-client request: a task's input request, or the transport's."""
        answered = parse_input_id(answer.message.get("id"))
        tasks = self.dispatcher.task_methods
        if isinstance(answered, TaskInputId):
            if tasks is not None:
                await tasks.answer_input(answer.context, answer.message)
        elif answered is not None:
            await self.transport.answer(answer.session.session_id, answered, answer.message)

    async def _cancel(self, cancel: Cancel) -> None:
        """`notifications/cancelled`: stop the request wherever it runs (here, another instance, the worker).
        One conditional write flags the request's call record (a buffered call, or the marker of the task
        the request created); a request id the session never used fails the condition and stores nothing."""
        session_id = cancel.session.session_id
        flagged = await self.calls.cancel(session_id, CallStream(cancel.request_id).format(), time.time())
        await self.transport.cancel(session_id, cancel.request_id)
        tasks = self.dispatcher.task_methods
        if flagged is not None and flagged.task_id is not None and tasks is not None:
            await tasks.cancel_created_task(cancel.context, flagged.task_id)

    async def _batch(self, batch: Batch) -> Response:
        """2025-03-26 batches: each member answered in one JSON array (or 202 if none needed answers)."""
        answers: list[dict[str, Any]] = []
        session = batch.context.session
        assert session is not None
        for item in batch.items:
            try:
                message = jsonrpc.classify(item)
            except MCPError as exc:
                rid = exc.data.get("id") if isinstance(exc.data, dict) else None
                answers.append(jsonrpc.error_message(rid, exc.to_error()))
                continue
            if message.kind == "response":
                await self._answer(ClientResponse(session, message.raw, batch.context))
            elif message.kind == "notification":
                rid = cancelled_request(message)
                if rid is not None:
                    await self._cancel(Cancel(session, rid, batch.context))
            elif message.method == "initialize":
                error = {"code": INVALID_REQUEST, "message": "initialize must not be batched"}
                answers.append(jsonrpc.error_message(message.id, error))
            else:
                context = batch.context.replace(request_id=message.id)
                answer = await self.dispatcher.handle(message, context, Channel())
                if answer.response is not None:
                    answers.append(answer.response)
        if not answers:
            return accepted()
        return Response(json.dumps(answers).encode(), media_type="application/json")
