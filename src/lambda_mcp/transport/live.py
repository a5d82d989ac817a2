"""Live calls of a streaming server: their outgoing messages, consumers, and pending client answers.

Only a long-lived process (uvicorn in `lambda-mcp dev`) keeps calls alive between HTTP requests;
a buffered Lambda invocation runs each call to completion inside its own request.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..protocol import jsonrpc
from ..protocol.ids import LiveInputId, LiveStream
from ..server.context import ClientError
from ..storage.ports import EventLog


class LiveCall:
    """One request being served: an ordered list of `(event_id, message)` plus the final response.

    `event_id` is None on streams without resumability (2026, and pre-2025-11-25 sessions).
    """

    def __init__(self, session_id: str | None, request_id: Any, events: EventLog | None) -> None:
        self.session_id = session_id
        self.request_id = request_id
        self.stream_id = LiveStream.new().format()
        self.events: list[tuple[str | None, dict[str, Any] | None]] = []
        self.response: dict[str, Any] | None = None
        self.status = 200
        self.opened: str | None = None
        """The session id an `initialize` call opened (for the `MCP-Session-Id` header)."""
        self.finished = False
        self.cancelled = False
        self.generation = 0
        """Bumped by `close_stream()`: consumers of an older generation end their HTTP response."""
        self.task: asyncio.Task[None] | None = None
        self.scopes: frozenset[str] = frozenset()
        """What the call reaches needs (a GET resuming it must hold them too)."""
        self._log = events if session_id is not None else None
        self._committed = False
        """Whether the call's events go to the event log as they come (once it answers with an SSE stream:
        a call answered with plain JSON writes nothing there)."""
        self._logging = asyncio.Lock()
        self._changed = asyncio.Condition()

    @property
    def resumable(self) -> bool:
        """Whether the call's SSE events carry ids a `Last-Event-ID` can resume from."""
        return self._log is not None

    async def push(self, message: dict[str, Any] | None) -> None:
        async with self._logging:
            event_id = None
            if self._log is not None and self._committed:
                assert self.session_id is not None
                event_id = (await self._log.append(self.session_id, self.stream_id, message)).event_id
            async with self._changed:
                self.events.append((event_id, message))
                self._changed.notify_all()

    async def commit(self) -> None:
        """The call answers with an SSE stream: log the events so far, in order (they get their ids), and
        every later one as it comes, so that a `Last-Event-ID` can resume the stream."""
        async with self._logging:
            if self._log is not None and not self._committed:
                assert self.session_id is not None
                for index, (_, message) in enumerate(list(self.events)):
                    event_id = (await self._log.append(self.session_id, self.stream_id, message)).event_id
                    self.events[index] = (event_id, message)
            self._committed = True

    async def finish(self, response: dict[str, Any] | None, status: int, opened: str | None = None) -> None:
        if response is not None:
            await self.push(response)
        async with self._changed:
            self.response, self.status, self.finished, self.opened = response, status, True, opened
            self._changed.notify_all()

    async def close_stream(self) -> None:
        async with self._changed:
            self.generation += 1
            self._changed.notify_all()

    def cancel(self) -> None:
        self.cancelled = True
        if self.task is not None and not self.task.done():
            self.task.cancel()

    async def wait(self, position: int, generation: int) -> None:
        """Wait until there is an event past `position`, the call finished, or the stream was closed."""
        async with self._changed:
            await self._changed.wait_for(
                lambda: len(self.events) > position or self.finished or self.generation != generation
            )

    def position_after(self, event_id: str) -> int | None:
        for index, (known, _) in enumerate(self.events):
            if known == event_id:
                return index + 1
        return None


class PendingRequests:
    """Server-to-client requests awaiting the client's response POST, by (session, request id)."""

    def __init__(self) -> None:
        self._futures: dict[tuple[str, str], asyncio.Future[dict[str, Any]]] = {}

    async def ask(self, call: LiveCall, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        assert call.session_id is not None
        rid = LiveInputId.new().format()
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        key = (call.session_id, rid)
        self._futures[key] = future
        try:
            await call.push(jsonrpc.request(rid, method, params))
            return await asyncio.wait_for(future, timeout)
        finally:
            self._futures.pop(key, None)

    def resolve(self, session_id: str, message: dict[str, Any]) -> bool:
        future = self._futures.get((session_id, str(message.get("id"))))
        if future is None or future.done():
            return False
        if "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {}
            future.set_exception(ClientError(error.get("code", 0), str(error.get("message", "client error"))))
        else:
            result = message.get("result")
            future.set_result(result if isinstance(result, dict) else {})
        return True
