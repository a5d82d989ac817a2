"""The authorization facade's state: small JSON rows by kind and key, each with an expiry, and the
in-memory backend (the DynamoDB one is `dynamodb.facade`).

Kinds: registered clients, fetched client metadata documents, pending authorizations, codes, refresh
token families, consents, and registration counters. Every row expires (`expires_at`, epoch seconds),
and every read ignores expired rows. The operations that must not race are conditional:

- `take` returns what a row held and makes it gone for every later read, once: a pending authorization
  is taken once even when two requests present it at the same moment;
- `swap` replaces a row only while its `version` is still the one the caller read (refresh rotation:
  only one of two requests presenting the same refresh token wins; a code marked used);

Both recognise their own write when its answer was lost (`storage.confirm`): a take or swap that
landed is never reported as lost to its caller.
- `count` adds one to a counter unless it has reached its limit (registration rate).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

MAX_ROW_BYTES = 16_384
"""The largest row the facade writes (a client's metadata is capped at 8 KB before it gets here)."""


class RowTooLarge(ValueError):
    """A row over `MAX_ROW_BYTES`: refused before it is written."""


def encoded(value: dict[str, Any]) -> str:
    text = json.dumps(value, separators=(",", ":"), sort_keys=True)
    if len(text.encode()) > MAX_ROW_BYTES:
        raise RowTooLarge(f"a facade row is larger than {MAX_ROW_BYTES} bytes")
    return text


class FacadeStore(Protocol):
    async def put(self, kind: str, key: str, value: dict[str, Any], expires_at: float, version: str = "") -> None:
        """Write (or overwrite) a row."""

    async def get(self, kind: str, key: str, now: float) -> tuple[dict[str, Any], str] | None:
        """The live row and its version, or None."""

    async def take(self, kind: str, key: str, now: float) -> dict[str, Any] | None:
        """Delete the live row and return it; None when there is none (or another request took it first)."""

    async def swap(
        self, kind: str, key: str, expected: str, value: dict[str, Any], expires_at: float, version: str, now: float
    ) -> bool:
        """Replace the live row whose version is `expected`; False when it is gone or its version moved on."""

    async def delete(self, kind: str, key: str) -> None:
        """Remove the row if it is there."""

    async def count(self, kind: str, key: str, limit: int, expires_at: float, now: float) -> bool:
        """Add one to the counter; False (and no change) when it already holds `limit`."""


class InMemoryFacadeStore:
    """One process's facade state (the dev server, tests); `max_rows` bounds it, oldest expiry first out."""

    def __init__(self, max_rows: int = 10_000) -> None:
        self.max_rows = max_rows
        self._rows: dict[tuple[str, str], tuple[str, str, float]] = {}

    def _live(self, kind: str, key: str, now: float) -> tuple[str, str, float] | None:
        row = self._rows.get((kind, key))
        if row is None or row[2] <= now:
            return None
        return row

    def _write(self, kind: str, key: str, value: dict[str, Any], expires_at: float, version: str) -> None:
        text = encoded(value)
        if (kind, key) not in self._rows and len(self._rows) >= self.max_rows:
            oldest = min(self._rows, key=lambda k: self._rows[k][2])
            del self._rows[oldest]
        self._rows[(kind, key)] = (text, version, expires_at)

    async def put(self, kind: str, key: str, value: dict[str, Any], expires_at: float, version: str = "") -> None:
        self._write(kind, key, value, expires_at, version)

    async def get(self, kind: str, key: str, now: float) -> tuple[dict[str, Any], str] | None:
        row = self._live(kind, key, now)
        return None if row is None else (json.loads(row[0]), row[1])

    async def take(self, kind: str, key: str, now: float) -> dict[str, Any] | None:
        row = self._live(kind, key, now)
        if row is None:
            return None
        del self._rows[(kind, key)]
        result: dict[str, Any] = json.loads(row[0])
        return result

    async def swap(
        self, kind: str, key: str, expected: str, value: dict[str, Any], expires_at: float, version: str, now: float
    ) -> bool:
        row = self._live(kind, key, now)
        if row is None or row[1] != expected:
            return False
        self._write(kind, key, value, expires_at, version)
        return True

    async def delete(self, kind: str, key: str) -> None:
        self._rows.pop((kind, key), None)

    async def count(self, kind: str, key: str, limit: int, expires_at: float, now: float) -> bool:
        row = self._live(kind, key, now)
        held = json.loads(row[0])["n"] if row else 0
        if held >= limit:
            return False
        self._write(kind, key, {"n": held + 1}, row[2] if row else expires_at, "")
        return True
