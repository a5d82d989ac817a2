"""`BufferedTransport`: the endpoint behind API Gateway and Lambda, where a response reaches the client
only once it ends, so nothing may wait inside an invocation for the client.

- calls run to their end in one response; a legacy call that asks the client something suspends and
  is re-run when the client resumes (`calls.py`); a legacy `tasks/result` ends early and is resumed
  (`waits.py`);
- a 2026 `subscriptions/listen` gets its acknowledgement, what changed within the hold, and a close;
- a legacy GET stream is polled: each GET returns what changed since the last (the change log) and
  an id naming where the next one reads from;
- GET resumption is one dispatch over the typed `Last-Event-ID`.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...config import Settings
from ...dispatch.dispatcher import Dispatcher
from ...protocol import jsonrpc
from ...protocol.ids import CallInputId, CallStream, ChangesCursor, InputId, WaitStream, change_cursor
from ...protocol.jsonrpc import RequestId
from ...protocol.names import SUBSCRIPTION_ID
from ...storage.ports import CallStore, ChangeLog, EventLog, SessionStore
from .. import changes, sse
from ..deadline import deadline
from ..inbound import Call, Listen, Resume
from ..oneshot import run_to_end
from ..replies import sse_reply, unknown_event_id
from .calls import SuspendedCalls
from .waits import ResultWaits, is_result_wait


class BufferedTransport:
    def __init__(
        self,
        dispatcher: Dispatcher,
        sessions: SessionStore,
        events: EventLog,
        calls: CallStore,
        change_log: ChangeLog,
        settings: Settings,
    ) -> None:
        self.dispatcher = dispatcher
        self.sessions = sessions
        self.settings = settings
        self.change_log = change_log
        self.suspended = SuspendedCalls(dispatcher, calls, events, settings)
        self.waits = ResultWaits(dispatcher, events, settings, self.suspended.mark)

    async def call(self, http: Request, call: Call) -> Response:
        message, context = call.message, call.context
        if call.accepts.sse and is_result_wait(message, context, self.dispatcher.task_methods is not None):
            return await self.waits.start(http, message, context)
        if call.accepts.sse and context.era == "legacy" and context.session is not None:
            return await self.suspended.run(http, message, context, wants_json=call.accepts.json)
        return await run_to_end(self.dispatcher, http, call, self.settings)

    async def listen(self, http: Request, listen: Listen) -> Response:
        """The acknowledgement, what changed within the hold (if one is set), then a graceful close; the
        client listens again when it wants more."""
        meta = {SUBSCRIPTION_ID: listen.message.id}
        ack = jsonrpc.notification(
            "notifications/subscriptions/acknowledged", {"notifications": listen.honoured, "_meta": meta}
        )
        body = sse.event(ack)
        hold = min(self.settings.listen_hold_seconds, self.settings.max_wait_seconds)
        if hold > 0:
            until = min(time.time() + hold, deadline(http.scope, self.settings.max_wait_seconds))
            for change in await changes.poll(self.change_log, change_cursor(time.time()), until):
                notification = changes.notification_for(change, listen.honoured, listen.principal, meta)
                if notification is not None:
                    body += sse.event(notification)
        assert listen.message.id is not None
        closing = jsonrpc.result_message(listen.message.id, {"resultType": "complete", "_meta": meta})
        return sse_reply(body + sse.event(closing))

    async def resume(self, http: Request, resume: Resume) -> Response:
        """A legacy GET: the change stream, or the resumption a `Last-Event-ID` names."""
        last, context = resume.last, resume.context
        if last is None:
            if not self.settings.get_stream:
                return Response(status_code=405, headers={"Allow": "POST, DELETE"})
            return await self._change_stream(http, resume, change_cursor(time.time()))
        if isinstance(last, ChangesCursor):  # never from before the session: no replay of others' history
            return await self._change_stream(http, resume, max(last.cursor, change_cursor(resume.session.created_at)))
        stream = last.kind
        if isinstance(stream, CallStream):
            return await self.suspended.resume(http, context, stream, last.format())
        if isinstance(stream, WaitStream):
            if await self.suspended.cancelled(resume.session.session_id, stream.request_id):
                return sse_reply(b"")  # no response: it was cancelled
            return await self.waits.resume(http, context, stream, last.format())
        return unknown_event_id()

    async def _change_stream(self, http: Request, resume: Resume, cursor: str) -> Response:
        """The changes since `cursor` (waiting up to `get_stream_seconds` for the first), then an id
        naming where the next poll reads from, and `retry:`."""
        wait = self.settings.get_stream_seconds
        until = min(time.time() + wait, deadline(http.scope, self.settings.max_wait_seconds))
        found = await changes.poll(self.change_log, cursor, until)
        body = sse.event(None, ChangesCursor(cursor).format())
        subscriptions = resume.session.subscriptions
        if any(change.kind == "resource" for change in found):
            current = await self.sessions.get(resume.session.session_id, time.time())
            subscriptions = current.subscriptions if current is not None else set()
        readable = changes.readable(self.dispatcher.app, subscriptions, resume.context.scopes)
        wanted = changes.every_list(readable, resume.session.session_id)
        for change in found:
            cursor = change.cursor
            notification = changes.notification_for(change, wanted, resume.session.principal)
            if notification is not None:
                body += sse.event(notification)
        return sse_reply(body + sse.event(None, ChangesCursor(cursor).format(), retry_ms=self.settings.retry_ms))

    async def answer(self, session_id: str, answered: InputId, response: dict[str, Any]) -> None:
        if isinstance(answered, CallInputId):
            await self.suspended.answer(session_id, answered, response)

    async def cancel(self, session_id: str, request_id: RequestId) -> None:
        """Nothing runs between invocations: a run in progress sees the flag the endpoint set."""

    def close(self, session_id: str) -> None:
        """Nothing runs between invocations: nothing to stop."""
