"""Which MCP protocol revisions the kit speaks, what each one has, and how a legacy `initialize` is negotiated.

The rest of the kit asks here by feature (`has_batches`, `has_legacy_tasks`, ...) and never compares
revision strings or names a revision itself: adding a revision, or moving a feature, is a change to
this module alone.
"""

from __future__ import annotations

MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26")
"""Legacy (initialize-handshake) revisions, newest first."""

SUPPORTED = (MODERN, *LEGACY)
MODERN_VERSIONS = frozenset({MODERN})
LEGACY_VERSIONS = frozenset(LEGACY)
NEWEST_LEGACY = LEGACY[0]
DEFAULT_LEGACY = "2025-03-26"
"""Assumed when a legacy request carries no MCP-Protocol-Version header (spec 2025-11-25 transports)."""

OLDEST_FIRST = tuple(reversed(SUPPORTED))
_ORDER = {revision: index for index, revision in enumerate(OLDEST_FIRST)}
_R0618, _R1125 = "2025-06-18", "2025-11-25"


def negotiate_legacy(requested: object) -> str:
    """Echo a supported legacy version, else counter-offer the newest legacy one."""
    if isinstance(requested, str) and requested in LEGACY_VERSIONS:
        return requested
    return NEWEST_LEGACY


def is_modern(version: str) -> bool:
    return version in MODERN_VERSIONS


def is_legacy(version: str) -> bool:
    return version in LEGACY_VERSIONS


_BEFORE = {revision: frozenset(OLDEST_FIRST[: _ORDER[revision]]) for revision in SUPPORTED}
"""The revisions older than each one (a set test: features are asked on every request)."""


def _since(version: str, revision: str) -> bool:
    """Whether `version` is `revision` or a later one (an unknown version counts as the newest)."""
    return version not in _BEFORE[revision]


# -- features --------------------------------------------------------------------------------------
def has_batches(version: str) -> bool:
    """JSON-RPC batches: 2025-03-26 only (2025-06-18 removed them)."""
    return version == DEFAULT_LEGACY


def has_elicitation(version: str) -> bool:
    return _since(version, _R0618)


def has_url_elicitation(version: str) -> bool:
    """URL-mode elicitation, sampling with tools, and multi-select (array) form fields: from 2025-11-25."""
    return _since(version, _R1125)


has_sampling_tools = has_url_elicitation
has_multi_select = has_url_elicitation


def has_elicitation_ids(version: str) -> bool:
    """`elicitationId`, `notifications/elicitation/complete` and -32042: 2025-11-25 sessions only."""
    return version == _R1125


def has_legacy_tasks(version: str) -> bool:
    """The core tasks of 2025-11-25 (`tasks/get|list|cancel|result`, `params.task`); 2026 has an extension."""
    return version == _R1125


def has_resumable_streams(version: str) -> bool:
    """SSE event ids with a priming event, `retry:` and server-closed streams on a legacy session."""
    return is_legacy(version) and _since(version, _R1125)


def has_structured_output(version: str) -> bool:
    """`structuredContent`, `outputSchema`, `title`, `_meta` and resource links: from 2025-06-18."""
    return _since(version, _R0618)


def names_form_mode(version: str) -> bool:
    """Whether a client declares form elicitation as `elicitation: {form: {}}` (from 2025-11-25) rather
    than `elicitation: {}`."""
    return _since(version, _R1125)
