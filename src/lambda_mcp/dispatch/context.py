"""What dispatch knows about the one request it serves: an immutable `RequestContext` (era, version,
session, caller, client capabilities) and a `Channel` for what the handler does to the outside
(send, ask, cancellation, closing the stream, the deadline of a wait).

The transport builds both; dispatch and handlers only read the context and use the channel.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..protocol.jsonrpc import RequestId
from ..server.call import no_claims
from ..server.middleware import RequestInfo
from ..server.steps import Checkpoints
from ..storage.records import SessionRecord
from .rounds import BufferedRound

Era = Literal["modern", "legacy"]
Send = Callable[[dict[str, Any]], Awaitable[None]]
Ask = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class RequestContext:
    """The request's era and negotiated version, the client's declared capabilities, the legacy session it
    belongs to, and who sent it (principal and token scopes, None when auth is `none`; token claims)."""

    era: Era
    version: str
    client_capabilities: Mapping[str, Any] = field(default_factory=dict)
    session: SessionRecord | None = None
    principal: str | None = None
    scopes: frozenset[str] | None = None
    request_id: RequestId | None = None
    body_bytes: int = 0
    """Size of the HTTP body the request came in (0: unknown): any part of the request is at most this
    big, so a size limit it fits needs no measuring."""
    claims: Mapping[str, Any] = field(default_factory=no_claims)
    """The caller's validated token claims: its `Identity`'s own mapping, never copied (`Context` and
    `RequestInfo` show it read-only); a task's run has the creating request's, from the task record."""

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


@dataclass
class WaitProgress:
    """What a legacy `tasks/result` wait delivered so far; a buffered transport carries it across resumptions."""

    relayed: int = 0
    """The sequence number of the last task notification relayed."""
    asked: list[str] = field(default_factory=list)
    """Input keys whose requests went to the client."""


@dataclass
class Channel:
    """How a handler reaches the client, supplied by the transport for the request's era and transport.

    `send` delivers a notification or server-to-client request on the request's own stream; `ask` sends
    a request and waits for the client's answer (streaming legacy transports); `round` is the run of a
    re-run call with what earlier runs recorded (buffered legacy transports, `dispatch/rounds.py`);
    `deadline` is when a blocking wait (legacy `tasks/result`) must hand back (`WaitInterrupted`), or an
    inline `ctx.sleep` end, None on a streaming server; `checkpoints` keep a task's run's steps and sleeps
    (None: outside a task, they run in the request).
    """

    send: Send = _drop
    ask: Ask | None = None
    round: BufferedRound | None = None
    is_cancelled: Callable[[], bool] = _never
    close_stream: Callable[[], Awaitable[None]] | None = None
    deadline: float | None = None
    wait: WaitProgress = field(default_factory=WaitProgress)
    checkpoints: Checkpoints | None = None


@dataclass(frozen=True)
class Reply:
    """What `Dispatcher.handle` answers with: the JSON-RPC response (None: the client cancelled the request),
    its HTTP status, and the session an `initialize` opened."""

    response: dict[str, Any] | None
    status: int = 200
    session: SessionRecord | None = None


Handler = Callable[[dict[str, Any], RequestContext, Channel], Awaitable[dict[str, Any]]]
"""A method handler: params, the request and its channel in; the result out (errors raise `MCPError`)."""
