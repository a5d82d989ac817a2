"""Middleware: app functions around every request, for audit, rate limits or tenancy rules.

```python
@app.middleware
async def audit(request: RequestInfo, call_next: CallNext) -> dict[str, Any]:
    result = await call_next(request)
    print(request.method, request.principal)
    return result
```

Each gets the `RequestInfo` (method, params, principal, scopes, claims, era, ...) and `call_next`, which
runs the next middleware and finally the method; it returns the method's result, or raises `MCPError` to
answer a JSON-RPC error instead (a `ToolError` from a `tools/call` middleware becomes an `isError` result).
Middlewares run in the order they were registered, the first outermost, on both eras, on the HTTP
function and in the task worker (there `task_id` is set: the run of a task the HTTP function created,
after the create went through them once). A call that asks the client for input runs again with the
answers (2026 MRTR rounds, buffered legacy resumptions), and each run goes through the middlewares.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, Literal

from ..protocol.values import lean_dataclass
from .call import NO_CLAIMS, no_claims, read_only


@lean_dataclass(frozen=True)  # a frozen dataclass, built lean (protocol/values.py); its `__init__` its own
class RequestInfo:
    """One request as middleware sees it. `params` is the request's own dict: treat it as read-only,
    or pass `dataclasses.replace(request, params=...)` to `call_next`."""

    method: str
    params: dict[str, Any]
    principal: str | None
    """Who is calling (`<issuer>#<subject>`, an IAM ARN, ...); None when auth is `none`."""
    era: Literal["legacy", "modern"]
    """`legacy` (sessions: 2025-03-26 ... 2025-11-25) or `modern` (2026-07-28, stateless)."""
    protocol_version: str
    session_id: str | None = None
    task_id: str | None = None
    """Set when the worker runs a task (the `tools/call` that created it already passed)."""
    scopes: frozenset[str] = frozenset()
    """The OAuth scopes the caller's token grants (as `ctx.scopes`); empty under auth `none`."""
    state: Any = None
    """What the app's lifespan yielded (as `ctx.state`)."""
    claims: Mapping[str, Any] = field(default_factory=no_claims)
    """The caller's validated token claims, read-only (as `ctx.claims`); empty under auth `none`."""

    def __init__(
        self,
        method: str,
        params: dict[str, Any],
        principal: str | None,
        era: Literal["legacy", "modern"],
        protocol_version: str,
        session_id: str | None = None,
        task_id: str | None = None,
        scopes: frozenset[str] | None = None,
        state: Any = None,
        claims: Mapping[str, Any] | None = None,
    ) -> None:
        """As the dataclass's own, but `scopes=None` (auth `none`, for dispatch) becomes empty, and `claims`
        a read-only view (None: empty)."""
        set_ = object.__setattr__
        set_(self, "method", method)
        set_(self, "params", params)
        set_(self, "principal", principal)
        set_(self, "era", era)
        set_(self, "protocol_version", protocol_version)
        set_(self, "session_id", session_id)
        set_(self, "task_id", task_id)
        set_(self, "scopes", frozenset() if scopes is None else scopes)
        set_(self, "state", state)
        set_(self, "claims", NO_CLAIMS if claims is None else read_only(claims))


CallNext = Callable[[RequestInfo], Awaitable[dict[str, Any]]]
Middleware = Callable[[RequestInfo, CallNext], Awaitable[dict[str, Any]]]


async def through(middlewares: Sequence[Middleware], request: RequestInfo, endpoint: CallNext) -> dict[str, Any]:
    """Run `request` through `middlewares` (first outermost) to `endpoint`."""
    if not middlewares:
        return await endpoint(request)

    def link(index: int) -> CallNext:
        if index == len(middlewares):
            return endpoint

        async def call(current: RequestInfo) -> dict[str, Any]:
            return await middlewares[index](current, link(index + 1))

        return call

    return await link(0)(request)
