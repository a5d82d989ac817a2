"""`RequestScope`: everything dispatch needs to know about the one request it is serving."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..storage.records import SessionRecord

Era = Literal["modern", "legacy"]


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
class RequestScope:
    """Era and version, the client's declared capabilities, and the channels back to the client.

    `send` delivers a JSON-RPC message (notification or server-to-client request) on the
    request's own stream; `server_request` sends a request and waits for the client's answer
    (streaming legacy transports only; None elsewhere).
    """

    era: Era
    version: str
    request_id: str | int | None = None
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    session: SessionRecord | None = None
    principal: str | None = None
    scopes: frozenset[str] | None = None
    """What the caller's token grants; None when scopes are not enforced (auth `none`)."""
    send: Callable[[dict[str, Any]], Awaitable[None]] = _drop
    server_request: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]] | None = None
    is_cancelled: Callable[[], bool] = _never
    close_stream: Callable[[], Awaitable[None]] | None = None
    new_session_id: str | None = None
    resumption: Resumption | None = None
    """Set on a buffered transport for a legacy call that may suspend and be re-run (see `Resumption`)."""
    wait_progress: WaitProgress = field(default_factory=WaitProgress)
    wait_until: float | None = None
    """Epoch seconds by which a blocking wait (legacy `tasks/result`) must hand back to the transport
    (`WaitInterrupted`), so it never outlives the invocation; None on a streaming server."""


@dataclass
class Resumption:
    """What earlier runs of a suspended legacy call on a buffered transport recorded: the client's
    answers by input key, the id each request to the client carries, and the stream closes passed."""

    answers: dict[str, dict[str, Any]]
    request_id_for: Callable[[str], str]
    checkpoints: int = 0
    passed: int = 0
    """Stream closes this run has passed (one more than `checkpoints` when it suspended at a new one)."""
    awaiting: list[str] = field(default_factory=list)
    """The input keys this run asked for and had no answer to (the suspension's requests)."""


class WaitInterrupted(Exception):
    """A blocking wait reached `RequestScope.wait_until`: the transport ends the response so the
    client can resume it (an SSE `retry:` and a `GET` with `Last-Event-ID`)."""


Handler = Callable[[dict[str, Any], RequestScope], Awaitable[dict[str, Any]]]
"""A method handler: params and scope in, result out (errors raise `MCPError`)."""
