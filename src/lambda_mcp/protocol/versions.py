"""Which MCP protocol revisions the kit speaks, and how a legacy `initialize` is negotiated."""

from __future__ import annotations

MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26")
"""Legacy (initialize-handshake) revisions, newest first."""

SUPPORTED = (MODERN, *LEGACY)
MODERN_VERSIONS = frozenset({MODERN})
LEGACY_VERSIONS = frozenset(LEGACY)
DEFAULT_LEGACY = "2025-03-26"
"""Assumed when a legacy request carries no MCP-Protocol-Version header (spec 2025-11-25 transports)."""


def negotiate_legacy(requested: object) -> str:
    """Echo a supported legacy version, else counter-offer the newest legacy one."""
    if isinstance(requested, str) and requested in LEGACY_VERSIONS:
        return requested
    return LEGACY[0]


def at_least(version: str, floor: str) -> bool:
    """True when `version` is the revision `floor` or a later one (ISO dates compare as strings)."""
    return version >= floor
