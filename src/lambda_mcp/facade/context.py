"""What the facade's flows (`authorize`, `grants`) need of the facade: its identity, its parts, its clock."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..config import Settings
from ..storage.facade import FacadeStore
from .clients import Clients
from .families import Families
from .limits import Limits
from .sealing import StateKeys
from .signing import Signer


class FacadeContext(Protocol):
    issuer: str
    """The facade's issuer: the MCP URL without `/mcp`."""
    resource: str
    """The MCP resource its tokens are for."""
    server_name: str
    settings: Settings
    store: FacadeStore
    clients: Clients
    families: Families
    limits: Limits
    state_keys: StateKeys
    signer: Signer
    upstream: Any
    """`upstream.Upstream` (or a stand-in in tests)."""
    clock: Callable[[], float]

    def path(self, route: str) -> str: ...

    def grantable(self, requested: str | None) -> list[str]: ...
