"""Waits that outlive an invocation (buffered legacy `tasks/result`), and the time any wait may take.

A legacy `tasks/result` blocks until its task is final. In Lambda the wait must end before the
invocation does, so the response ends early: a priming event id, what it relayed, and a last id'd
event with `retry:`. The id's stream (`WaitStream`) names the task and the request, so a `GET` with
`Last-Event-ID` on any instance rebuilds the same request and waits again; the event itself holds how
far the wait got (`WaitProgress`: notifications relayed, input requests sent).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ...config import Settings
from ...dispatch.context import Channel, RequestContext, WaitProgress
from ...dispatch.dispatcher import Dispatcher
from ...dispatch.task_methods import legacy_tasks_enabled
from ...protocol.ids import CallStream, WaitStream, could_be_task_id
from ...protocol.jsonrpc import Message
from ...server.suspensions import WaitInterrupted
from ...storage.ports import EventLog
from ...storage.records import CallRecord
from .. import sse
from ..deadline import deadline
from ..replies import sse_reply, unknown_event_id


def is_result_wait(message: Message, context: RequestContext, tasks_offered: bool) -> bool:
    """Whether a call is a legacy `tasks/result` whose wait can end early and be resumed: on a session
    that has tasks, naming an id that could be a task's (anything else is answered, and logs nothing)."""
    task_id = (message.params or {}).get("taskId")
    return (
        message.method == "tasks/result"
        and tasks_offered
        and legacy_tasks_enabled(context.era, context.version)
        and context.session is not None
        and isinstance(task_id, str)
        and could_be_task_id(task_id)
    )


def _request_of(stream: WaitStream) -> Message:
    """The `tasks/result` request a wait's stream belongs to."""
    params = {"taskId": stream.task_id}
    raw = {"jsonrpc": "2.0", "id": stream.request_id, "method": "tasks/result", "params": params}
    return Message("request", raw, stream.request_id, "tasks/result", params)


class ResultWaits:
    def __init__(
        self,
        dispatcher: Dispatcher,
        events: EventLog,
        settings: Settings,
        mark: Callable[[CallRecord], Awaitable[None]],
    ) -> None:
        self.dispatcher = dispatcher
        self.events = events
        self.settings = settings
        self.mark = mark
        """Leaves the marker a `notifications/cancelled` for the waiting request finds."""

    async def start(self, http: Request, message: Message, context: RequestContext) -> Response:
        return await self._wait(http, message, context, WaitProgress(), None)

    async def resume(self, http: Request, context: RequestContext, stream: WaitStream, event_id: str) -> Response:
        """A `GET` with the `Last-Event-ID` of an earlier response of the wait: wait on from where it got."""
        assert context.session is not None
        event = await self.events.get(context.session.session_id, event_id)
        if event is None:
            return unknown_event_id()
        saved = event.message.get("wait") if isinstance(event.message, dict) else None
        progress = WaitProgress()
        if isinstance(saved, dict):
            progress = WaitProgress(int(saved.get("relayed", 0)), list(saved.get("asked", [])))
        message = _request_of(stream)
        context = context.replace(request_id=message.id)
        return await self._wait(http, message, context, progress, event_id)

    async def _wait(
        self,
        http: Request,
        message: Message,
        context: RequestContext,
        progress: WaitProgress,
        event_id: str | None,
    ) -> Response:
        """Run the wait until it answers or the invocation's time runs low (or it sent the client requests
        it must answer first); then end the SSE response with what it relayed, an id and `retry:`."""
        assert context.session is not None and message.id is not None
        session_id = context.session.session_id
        stream = WaitStream(str((message.params or {})["taskId"]), message.id).format()
        first, now = event_id is None, time.time()
        if event_id is None:
            event_id = (await self.events.append(session_id, stream, None)).event_id
        relayed: list[dict[str, Any]] = []

        async def collect(outgoing: dict[str, Any]) -> None:
            relayed.append(outgoing)

        channel = Channel(send=collect, deadline=deadline(http.scope, self.settings.max_wait_seconds), wait=progress)
        body = sse.event(None, event_id)
        try:
            answer = await self.dispatcher.handle(message, context, channel)
        except WaitInterrupted:
            if first:  # the wait outlives this response: a cancel of its request must find it
                await self.mark(CallRecord(session_id, CallStream(message.id).format(), "", message.raw, now, 0.0))
            marker: dict[str, object] = {"wait": {"relayed": progress.relayed, "asked": progress.asked}}
            last = (await self.events.append(session_id, stream, marker)).event_id
            body += b"".join(sse.event(n) for n in relayed)
            return sse_reply(body + sse.event(None, last, retry_ms=self.settings.retry_ms))
        body += b"".join(sse.event(n) for n in relayed)
        if answer.response is not None:
            body += sse.event(answer.response)
        return sse_reply(body, answer.status)
