"""What one call a handler serves is (`CallInfo`), what its `Context` may do outside it (`Hooks`), and the
read-only claims every context shows: built by dispatch, read by `server.context.Context`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from ..protocol.values import Struct
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


class CallInfo(Struct):
    """What the call a handler serves is, and who makes it (read as `Context` attributes). Built once per
    request and read once: a `Struct` (slotted, its `__init__` written out), not frozen, since a frozen
    class costs microseconds to build."""

    __slots__ = (
        "request_id",
        "method",
        "protocol_version",
        "client_capabilities",
        "meta",
        "session_id",
        "principal",
        "scopes",
        "claims",
        "task_id",
        "log_level",
        "state",
        "sync_in_thread",
        "idempotency_key",
        "deadline",
    )
    request_id: str | int | None
    method: str
    protocol_version: str
    client_capabilities: dict[str, Any]
    meta: dict[str, Any]
    session_id: str | None
    principal: str | None
    scopes: frozenset[str] | None
    """None under auth `none` (what dispatch reads); `ctx.scopes` is then empty."""
    claims: Mapping[str, Any]
    """The caller's validated token claims (the identity's own mapping: `Context` shows a read-only view)."""
    task_id: str | None
    log_level: str | None
    """The level at and above which `ctx.log` sends (None: it sends nothing)."""
    state: Any
    sync_in_thread: bool
    idempotency_key: str
    """The call's key when an earlier run minted it; empty: the first read of `ctx.idempotency_key` mints one."""
    deadline: float | None
    """When the request must be answered (epoch seconds); None: no bound the kit knows of."""

    def __init__(
        self,
        request_id: str | int | None,
        method: str,
        protocol_version: str,
        client_capabilities: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
        session_id: str | None = None,
        principal: str | None = None,
        scopes: frozenset[str] | None = None,
        claims: Mapping[str, Any] | None = None,
        task_id: str | None = None,
        log_level: str | None = None,
        state: Any = None,
        sync_in_thread: bool = False,
        idempotency_key: str = "",
        deadline: float | None = None,
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.protocol_version = protocol_version
        self.client_capabilities = {} if client_capabilities is None else client_capabilities
        self.meta = {} if meta is None else meta
        self.session_id = session_id
        self.principal = principal
        self.scopes = scopes
        self.claims = NO_CLAIMS if claims is None else claims
        self.task_id = task_id
        self.log_level = log_level
        self.state = state
        self.sync_in_thread = sync_in_thread
        self.idempotency_key = idempotency_key
        self.deadline = deadline


class Hooks(Struct):
    """What a handler's calls do outside it, supplied by dispatch for the request's era and transport."""

    __slots__ = (
        "emit",
        "input_channel",
        "is_cancelled",
        "close_stream",
        "notify_changed",
        "start_task",
        "checkpoints",
        "credentials",
    )
    emit: Emit
    input_channel: InputChannel
    is_cancelled: Callable[[], bool]
    close_stream: Callable[[], Awaitable[None]] | None
    notify_changed: Callable[[str, str | None, str | None], Awaitable[None]] | None
    start_task: Callable[[], Awaitable[None]] | None
    checkpoints: Checkpoints | None
    """Where `ctx.step` and `ctx.sleep` are kept (a task's run); None: in the request, recording nothing."""
    credentials: Credentials | None
    """The caller's tokens for other services (`ctx.connection`, `ctx.upstream_token`): the authorization
    facade's (`LAMBDA_MCP_AUTH=proxy`), or the test client's seeded ones; None: there are none."""

    def __init__(
        self,
        emit: Emit,
        input_channel: InputChannel,
        is_cancelled: Callable[[], bool],
        close_stream: Callable[[], Awaitable[None]] | None = None,
        notify_changed: Callable[[str, str | None, str | None], Awaitable[None]] | None = None,
        start_task: Callable[[], Awaitable[None]] | None = None,
        checkpoints: Checkpoints | None = None,
        credentials: Credentials | None = None,
    ) -> None:
        self.emit = emit
        self.input_channel = input_channel
        self.is_cancelled = is_cancelled
        self.close_stream = close_stream
        self.notify_changed = notify_changed
        self.start_task = start_task
        self.checkpoints = checkpoints
        self.credentials = credentials
