"""A call run to its end inside one HTTP response: JSON, or a finished SSE body when it sent
notifications (or the client accepts only SSE). A buffered transport answers most calls this way;
a streaming server answers clients that accept only JSON this way."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..config import Settings
from ..dispatch.context import Channel
from ..dispatch.dispatcher import Dispatcher
from ..protocol import jsonrpc
from ..server.suspensions import WaitInterrupted
from . import sse
from .deadline import deadline, still_running
from .inbound import Call
from .replies import json_reply, sse_reply


async def run_to_end(dispatcher: Dispatcher, http: Request, call: Call, settings: Settings) -> Response:
    notifications: list[dict[str, Any]] = []

    async def collect(outgoing: dict[str, Any]) -> None:
        notifications.append(outgoing)

    channel = Channel(send=collect, deadline=deadline(http.scope, settings.max_wait_seconds))
    headers: dict[str, str] | None = None
    try:
        answer = await dispatcher.handle(call.message, call.context, channel)
        response, status = answer.response, answer.status
        if answer.session is not None:
            headers = {"mcp-session-id": answer.session.session_id}
    except WaitInterrupted:  # a JSON-only client cannot resume a wait: say so; the task goes on
        assert call.message.id is not None
        response, status = jsonrpc.error_message(call.message.id, still_running()), 200
    if notifications and call.accepts.sse or not call.accepts.json:
        return sse_reply(sse.body(notifications, response), status, headers)
    return json_reply(response, status, headers)
