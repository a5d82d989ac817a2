"""Storage errors every adapter raises in place of its backend's own exceptions."""

from __future__ import annotations

from ..protocol.errors import KitFailure


class StorageError(KitFailure):
    """The backend failed (throttled, unreachable, misconfigured); never means "not found"."""


class NotFoundError(StorageError):
    """The record does not exist, has expired, or was terminated."""


class ConflictError(StorageError):
    """A conditional write lost: the record was not in the state the write required."""


class StorageUnavailable(StorageError):
    """The backend is throttling, failing or unreachable after the client's own retries: the request may
    succeed if repeated later (the kit answers 503 with `Retry-After`)."""


class LimitExceeded(StorageError):
    """The write would take a record past a bound the kit keeps (e.g. subscriptions per session)."""
