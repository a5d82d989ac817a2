"""The authorization server as the kit sees it: its metadata and its signing keys, fetched on demand
and kept so that a slow, failing or lying issuer costs little and never wipes out what works.

- **One fetch at a time.** Requests that need a fetch while one is running wait for it and share its
  outcome (they never start a second one, and never see a half-loaded state).
- **One deadline** (`discovery_seconds`, 6 s) covers a whole discovery: the metadata (up to three
  well-known URLs), then the JWKS. It is shorter than the REST authorizer's timeout (10 s).
- **Failures are remembered** for `failure_seconds` (15 s): meanwhile a request that needs keys the
  kit does not hold is answered at once (503 with `Retry-After`), not after another wait.
- **Good keys are kept** until a good set replaces them: a failed, empty or unusable refresh (which
  any token naming an unknown `kid` can trigger, at most once per `refresh_seconds`) changes nothing.
- **Keys age.** A set older than `refresh_after_seconds` (1 h) is refreshed on next use, so a key the
  issuer removed stops being trusted within the hour; if the issuer cannot be reached the old set
  serves until `max_age_seconds` (24 h), and then the kit answers 503 until it can.

Everything here blocks (it fetches with `urllib`); async callers run `load` in a worker thread and
use `cached` on the event loop. One `Issuer` serves every thread and event loop of the process.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from .fetch import Deadline, FetchError, fetch_json, issuer_metadata

logger = logging.getLogger("lambda_mcp.auth")

DISCOVERY_SECONDS = 6.0
FAILURE_SECONDS = 15.0
REFRESH_SECONDS = 60.0
REFRESH_AFTER_SECONDS = 3600.0
MAX_AGE_SECONDS = 86_400.0
_KEY_TYPES = frozenset({"RSA", "EC"})

Fetch = Callable[[str, Deadline], dict[str, Any]]
Metadata = Callable[[str, Deadline], dict[str, Any]]


class IssuerUnavailable(Exception):
    """The issuer's metadata or keys could not be fetched (a server-side problem: 503, not 401)."""

    def __init__(self, reason: str, retry_after: int) -> None:
        super().__init__(reason)
        self.retry_after = retry_after
        """Seconds until the kit will try the issuer again."""


class Issuer:
    def __init__(
        self,
        url: str,
        *,
        jwks_url: str | None = None,
        fetch: Fetch = fetch_json,
        metadata: Metadata = issuer_metadata,
        discovery_seconds: float = DISCOVERY_SECONDS,
        failure_seconds: float = FAILURE_SECONDS,
        refresh_seconds: float = REFRESH_SECONDS,
        refresh_after_seconds: float = REFRESH_AFTER_SECONDS,
        max_age_seconds: float = MAX_AGE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self._jwks_url = jwks_url
        self._fetch = fetch
        self._fetch_metadata = metadata
        self.discovery_seconds = discovery_seconds
        self.failure_seconds = failure_seconds
        self.refresh_seconds = refresh_seconds
        self.refresh_after_seconds = refresh_after_seconds
        self.max_age_seconds = max_age_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._metadata: dict[str, Any] | None = None
        self._keys: list[dict[str, Any]] = []
        self._keys_at: float | None = None
        """When the current key set was fetched (None: never)."""
        self._attempted_at: float | None = None
        self._failed_until = 0.0
        self._failure = ""
        self.loads = 0
        """Completed key fetches (successful or not): a caller that waited for one compares before and after."""
        self.fetches = 0
        """JWKS requests made (for tests and benchmarks)."""

    # -- keys ---------------------------------------------------------------------------------------
    def cached(self, kid: str | None, algorithm: str, fits: Callable[[Mapping[str, Any], str], bool]) -> Any:
        """The key for `kid` from the set held now (no I/O), or None when a fetch is needed first."""
        keys = self._fresh_keys(self._clock())
        return _find(keys, kid, algorithm, fits) if keys is not None else None

    def load(self, kid: str | None, algorithm: str, fits: Callable[[Mapping[str, Any], str], bool]) -> Any:
        """The key for `kid`, fetching the set when none is held, it is old, or it lacks `kid` (at most
        once per `refresh_seconds` for that). None when the issuer has no such key; raises
        `IssuerUnavailable` when no usable set is held and the issuer cannot be reached."""
        seen = self.loads
        now = self._clock()
        usable = self._usable_keys(now)
        found = _find(usable, kid, algorithm, fits) if usable else None
        if usable and found is not None and not self._stale(now):
            return found
        self._refresh(seen, unknown_kid=bool(usable) and found is None)
        usable = self._usable_keys(self._clock())
        if not usable:
            raise IssuerUnavailable(self._failure or "the issuer published no usable keys", self.retry_after())
        return _find(usable, kid, algorithm, fits)

    def retry_after(self) -> int:
        return max(1, math.ceil(self._failed_until - self._clock()))

    def _fresh_keys(self, now: float) -> list[dict[str, Any]] | None:
        if self._keys_at is None or now - self._keys_at >= self.refresh_after_seconds:
            return None
        return self._keys

    def _usable_keys(self, now: float) -> list[dict[str, Any]]:
        if self._keys_at is None or now - self._keys_at >= self.max_age_seconds:
            return []
        return self._keys

    def _stale(self, now: float) -> bool:
        return self._keys_at is None or now - self._keys_at >= self.refresh_after_seconds

    def _refresh(self, seen: int, *, unknown_kid: bool) -> None:
        """Fetch the key set unless a fetch finished since `seen` (its outcome stands), a failure is being
        remembered, or (for an unknown kid) one was tried less than `refresh_seconds` ago."""
        with self._lock:
            now = self._clock()
            if self.loads != seen or now < self._failed_until:
                return
            if unknown_kid and self._attempted_at is not None and now - self._attempted_at < self.refresh_seconds:
                return
            self._attempted_at = now
            deadline = Deadline(self.discovery_seconds)
            try:
                location = self._jwks_location(deadline)
                self.fetches += 1
                keys = _usable(self._fetch(location, deadline))
            except FetchError as exc:
                self._failed(str(exc))
            else:
                if keys:
                    self._keys, self._keys_at, self._failed_until = keys, self._clock(), 0.0
                else:
                    self._failed(f"the key set at {location} holds no usable signing key")
            finally:
                self.loads += 1

    def _jwks_location(self, deadline: Deadline) -> str:
        if self._jwks_url is None:
            if self._metadata is None:
                self._metadata = self._fetch_metadata(self.url, deadline)
            uri = self._metadata.get("jwks_uri")
            if not isinstance(uri, str):
                raise FetchError(f"the metadata of {self.url} names no jwks_uri")
            self._jwks_url = uri
        return self._jwks_url

    def _failed(self, reason: str) -> None:
        self._failed_until = self._clock() + self.failure_seconds
        self._failure = reason
        kept = "keeping the keys it had" if self._keys else "no keys are held"
        logger.warning("auth: the issuer is unavailable (%s); %s; next try in %g s", reason, kept, self.failure_seconds)

    # -- metadata -----------------------------------------------------------------------------------
    def metadata(self) -> dict[str, Any]:
        """The issuer's metadata document (fetched once per process); raises `IssuerUnavailable`."""
        if self._metadata is not None:
            return self._metadata
        seen = self.loads
        with self._lock:
            if self._metadata is None and self.loads == seen and self._clock() >= self._failed_until:
                try:
                    self._metadata = self._fetch_metadata(self.url, Deadline(self.discovery_seconds))
                except FetchError as exc:
                    self._failed(str(exc))
                finally:
                    self.loads += 1
        if self._metadata is None:
            raise IssuerUnavailable(self._failure or "the issuer's metadata is unavailable", self.retry_after())
        return self._metadata


def _usable(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    keys = document.get("keys")
    if not isinstance(keys, list):
        return []
    return [k for k in keys if isinstance(k, dict) and k.get("kty") in _KEY_TYPES and k.get("use", "sig") == "sig"]


def _find(
    keys: list[dict[str, Any]], kid: str | None, algorithm: str, fits: Callable[[Mapping[str, Any], str], bool]
) -> dict[str, Any] | None:
    fitting = [k for k in keys if fits(k, algorithm)]
    if kid is None:
        return fitting[0] if len(fitting) == 1 else None
    return next((k for k in fitting if k.get("kid") == kid), None)
