"""What dispatch knows about the one request it serves: an immutable `RequestContext` (era, version,
session, caller, client capabilities) and a `Channel` for what the handler does to the outside
(send, ask, cancellation, closing the stream, the deadline of a wait).

The transport builds both; dispatch and handlers only read the context and use the channel.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from ..protocol.jsonrpc import RequestId
from ..protocol.values import Struct, Value, set_field
from ..server.call import NO_CLAIMS
from ..server.middleware import RequestInfo
from ..server.steps import Checkpoints
from ..storage.records import SessionRecord
from .rounds import BufferedRound

Era = Literal["modern", "legacy"]
Send = Callable[[dict[str, Any]], Awaitable[None]]
Ask = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


class RequestContext(Value):
    """The request's era and negotiated version, the client's declared capabilities, the legacy session it
    belongs to, and who sent it (principal and token scopes, None when auth is `none`; token claims)."""

    __slots__ = (
        "era",
        "version",
        "client_capabilities",
        "session",
        "principal",
        "scopes",
        "request_id",
        "body_bytes",
        "claims",
    )
    era: Era
    version: str
    client_capabilities: Mapping[str, Any]
    session: SessionRecord | None
    principal: str | None
    scopes: frozenset[str] | None
    request_id: RequestId | None
    body_bytes: int
    """Size of the HTTP body the request came in (0: unknown): any part of the request is at most this
    big, so a size limit it fits needs no measuring."""
    claims: Mapping[str, Any]
    """The caller's validated token claims: its `Identity`'s own mapping, never copied (`Context` and
    `RequestInfo` show it read-only); a task's run has the creating request's, from the task record."""

    def __init__(
        self,
        era: Era,
        version: str,
        client_capabilities: Mapping[str, Any] | None = None,
        session: SessionRecord | None = None,
        principal: str | None = None,
        scopes: frozenset[str] | None = None,
        request_id: RequestId | None = None,
        body_bytes: int = 0,
        claims: Mapping[str, Any] | None = None,
    ) -> None:
        set_field(self, "era", era)
        set_field(self, "version", version)
        set_field(self, "client_capabilities", {} if client_capabilities is None else client_capabilities)
        set_field(self, "session", session)
        set_field(self, "principal", principal)
        set_field(self, "scopes", scopes)
        set_field(self, "request_id", request_id)
        set_field(self, "body_bytes", body_bytes)
        set_field(self, "claims", NO_CLAIMS if claims is None else claims)

    def seen(
        self, method: str, params: dict[str, Any], state: Any, session_id: str | None, task_id: str | None = None
    ) -> RequestInfo:
        """This request as middleware sees it (`state`: what the app's lifespan yielded)."""
        return RequestInfo(
            method, params, self.principal, self.era, self.version, session_id, task_id, self.scopes, state, self.claims
        )


async def _drop(message: dict[str, Any]) -> None:
    return None


def _never() -> bool:
    return False


class WaitProgress(Struct):
    """What a legacy `tasks/result` wait delivered so far; a buffered transport carries it across resumptions."""

    __slots__ = ("relayed", "asked")
    relayed: int
    """The sequence number of the last task notification relayed."""
    asked: list[str]
    """Input keys whose requests went to the client."""

    def __init__(self, relayed: int = 0, asked: list[str] | None = None) -> None:
        self.relayed = relayed
        self.asked = [] if asked is None else asked


class Channel(Struct):
    """How a handler reaches the client, supplied by the transport for the request's era and transport.

    `send` delivers a notification or server-to-client request on the request's own stream; `ask` sends
    a request and waits for the client's answer (streaming legacy transports); `round` is the run of a
    re-run call with what earlier runs recorded (buffered legacy transports, `dispatch/rounds.py`);
    `deadline` is when a blocking wait (legacy `tasks/result`) must hand back (`WaitInterrupted`), or an
    inline `ctx.sleep` end, None on a streaming server; `checkpoints` keep a task's run's steps and sleeps
    (None: outside a task, they run in the request).
    """

    __slots__ = ("send", "ask", "round", "is_cancelled", "close_stream", "deadline", "wait", "checkpoints")
    send: Send
    ask: Ask | None
    round: BufferedRound | None
    is_cancelled: Callable[[], bool]
    close_stream: Callable[[], Awaitable[None]] | None
    deadline: float | None
    wait: WaitProgress
    checkpoints: Checkpoints | None

    def __init__(
        self,
        send: Send = _drop,
        ask: Ask | None = None,
        round: BufferedRound | None = None,
        is_cancelled: Callable[[], bool] = _never,
        close_stream: Callable[[], Awaitable[None]] | None = None,
        deadline: float | None = None,
        wait: WaitProgress | None = None,
        checkpoints: Checkpoints | None = None,
    ) -> None:
        self.send = send
        self.ask = ask
        self.round = round
        self.is_cancelled = is_cancelled
        self.close_stream = close_stream
        self.deadline = deadline
        self.wait = WaitProgress() if wait is None else wait
        self.checkpoints = checkpoints


class Reply(Value):
    """What `Dispatcher.handle` answers with: the JSON-RPC response (None: the client cancelled the request),
    its HTTP status, and the session an `initialize` opened."""

    __slots__ = ("response", "status", "session")
    response: dict[str, Any] | None
    status: int
    session: SessionRecord | None

    def __init__(
        self,
        response: dict[str, Any] | None,
        status: int = 200,
        session: SessionRecord | None = None,
    ) -> None:
        set_field(self, "response", response)
        set_field(self, "status", status)
        set_field(self, "session", session)


Handler = Callable[[dict[str, Any], RequestContext, Channel], Awaitable[dict[str, Any]]]
"""A method handler: params, the request and its channel in; the result out (errors raise `MCPError`)."""
