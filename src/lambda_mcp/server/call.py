"""What one call a handler serves is (`CallInfo`), what its `Context` may do outside it (`Hooks`), and the
read-only claims every context shows: built by dispatch, read by `server.context.Context`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from .steps import Checkpoints

if TYPE_CHECKING:
    from .credentials import Credentials

Emit = Callable[[str, dict[str, Any]], Awaitable[None]]
NO_CLAIMS: Mapping[str, Any] = MappingProxyType({})
"""The claims of a caller without a token (auth `none`, an IAM caller): none, and read-only like any."""


def no_claims() -> Mapping[str, Any]:
    """`NO_CLAIMS`, as a dataclass field's default (a mapping proxy is not hashable: no plain default)."""
    return NO_CLAIMS


def read_only(claims: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only view of `claims` (not a copy: a view costs tens of nanoseconds, whatever the claims)."""
    if type(claims) is MappingProxyType:
        return claims
    return MappingProxyType(claims) if claims else NO_CLAIMS


class InputChannel(Protocol):
    """How a request obtains client input; supplied by dispatch for the request's era and transport."""

    async def ask(self, requests: Mapping[str, dict[str, Any]]) -> dict[str, Any]: ...


@dataclass(slots=True)
class CallInfo:
    """What the call a handler serves is, and who makes it (read as `Context` attributes). Built once per
    request and read once: slotted, not frozen, since a frozen dataclass costs microseconds to build."""

    request_id: str | int | None
    method: str
    protocol_version: str
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    principal: str | None = None
    scopes: frozenset[str] | None = None
    """None under auth `none` (what dispatch reads); `ctx.scopes` is then empty."""
    claims: Mapping[str, Any] = field(default_factory=no_claims)
    """The caller's validated token claims (the identity's own mapping: `Context` shows a read-only view)."""
    task_id: str | None = None
    log_level: str | None = None
    """The level at and above which `ctx.log` sends (None: it sends nothing)."""
    state: Any = None
    sync_in_thread: bool = False
    idempotency_key: str = ""
    """The call's key when an earlier run minted it; empty: the first read of `ctx.idempotency_key` mints one."""
    deadline: float | None = None
    """When the request must be answered (epoch seconds); None: no bound the kit knows of."""


@dataclass(slots=True)
class Hooks:
    """What a handler's calls do outside it, supplied by dispatch for the request's era and transport."""

    emit: Emit
    input_channel: InputChannel
    is_cancelled: Callable[[], bool]
    close_stream: Callable[[], Awaitable[None]] | None = None
    notify_changed: Callable[[str, str | None, str | None], Awaitable[None]] | None = None
    start_task: Callable[[], Awaitable[None]] | None = None
    checkpoints: Checkpoints | None = None
    """Where `ctx.step` and `ctx.sleep` are kept (a task's run); None: in the request, recording nothing."""
    credentials: Credentials | None = None
    """The caller's tokens for other services (`ctx.connection`, `ctx.upstream_token`): the authorization
    facade's (`LAMBDA_MCP_AUTH=proxy`), or the test client's seeded ones; None: there are none."""
