"""The facade's abuse limits: what one source address, one target host and everyone together may do in a
window of `WINDOW_SECONDS`, counted in the facade's store.

| limit | counts | per window |
|---|---|---|
| `register:ip`, `register:all` | client registrations (DCR): from one address, in all | 20, 2,000 |
| `pending:ip` | authorizations started (a consent page or a remembered consent), from one address | 60 |
| `cimd:ip`, `cimd:host`, `cimd:all` | document fetches: asked by one address, of one host, in all | 30, 30, 600 |

The source address is the front door's (`requestContext`'s `sourceIp`, which Mangum and `lambda-mcp serve`
put in the ASGI scope's `client`), never a header a client could write. A spent limit is a 429 whose
`Retry-After` is the time left in the window.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from starlette.requests import Request

from ..storage.facade import FacadeStore
from .errors import OAuthError

WINDOW_SECONDS = 600
LIMITS: Mapping[str, int] = {
    "register:ip": 20,
    "register:all": 2000,
    "pending:ip": 60,
    "cimd:ip": 30,
    "cimd:host": 30,
    "cimd:all": 600,
}


def source_address(request: Request) -> str:
    """The caller's address as the front door saw it (`unknown` when it is not known)."""
    event = request.scope.get("aws.event")
    if isinstance(event, dict):
        context = event.get("requestContext") or {}
        found = (context.get("http") or {}).get("sourceIp") or (context.get("identity") or {}).get("sourceIp")
        if isinstance(found, str) and found:
            return found
    client = request.client
    return client.host if client is not None and client.host else "unknown"


class Limits:
    def __init__(self, store: FacadeStore, clock: Callable[[], float], overrides: Mapping[str, int] | None = None):
        self.store = store
        self.clock = clock
        self.limits = {**LIMITS, **(overrides or {})}

    async def spend(self, name: str, key: str, what: str) -> None:
        """Count one against limit `name` for `key`; `OAuthError` 429 (with `retry_after`) when it is spent."""
        now = self.clock()
        window = int(now // WINDOW_SECONDS)
        ends = (window + 1) * WINDOW_SECONDS
        if not await self.store.count("rate", f"{name}:{key}:{window}", self.limits[name], ends + 60, now):
            raise OAuthError(
                "temporarily_unavailable", f"too many {what}; try again later", 429, retry_after=math.ceil(ends - now)
            )
