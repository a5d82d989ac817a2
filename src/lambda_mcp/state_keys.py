"""Where the key sealing 2026 `requestState` comes from: a fixed value (`LAMBDA_MCP_STATE_KEY`), or an AWS
Secrets Manager secret read at run time (`LAMBDA_MCP_STATE_KEY_SECRET`, its ARN or name).

A secret is read through Powertools Parameters and cached for `max_age` seconds, so a rotation takes
effect within that time without a redeploy, and the key never sits in the function's configuration.
Its previous version (`AWSPREVIOUS`) still opens states sealed before a rotation. Nothing is fetched
until a request first seals or opens a state (boto3 and Powertools Parameters load only then).
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from .storage.errors import StorageUnavailable


class KeyRing(Protocol):
    def in_use(self) -> tuple[bytes, ...]:
        """The keys in use: the first seals, any of them opens."""
        ...


class FixedKey:
    def __init__(self, key: bytes) -> None:
        self._keys = (key,)

    def in_use(self) -> tuple[bytes, ...]:
        return self._keys


class SecretKey:
    """The current (and previous) version of a Secrets Manager secret's string."""

    def __init__(self, secret: str, *, max_age: int = 300) -> None:
        self.secret = secret
        self.max_age = max_age
        self._providers: tuple[Any, Any] | None = None
        self._no_previous_until = 0.0

    def in_use(self) -> tuple[bytes, ...]:
        current_provider, previous_provider = self._provider_pair()
        try:
            current = current_provider.get(self.secret, max_age=self.max_age)
        except Exception as exc:  # throttled, unreachable, denied: the request may be retried
            raise StorageUnavailable(f"the requestState key secret could not be read: {exc}") from exc
        previous = None
        if time.monotonic() >= self._no_previous_until:
            try:  # the cache is per provider, so the previous version has its own
                previous = previous_provider.get(self.secret, max_age=self.max_age, VersionStage="AWSPREVIOUS")
            except Exception:  # never rotated (no previous version), or unreadable: not asked again for a while
                self._no_previous_until = time.monotonic() + self.max_age
        return tuple(_bytes(value) for value in (current, previous) if value)

    def _provider_pair(self) -> tuple[Any, Any]:
        if self._providers is None:
            from aws_lambda_powertools.utilities.parameters import SecretsProvider

            self._providers = (SecretsProvider(), SecretsProvider())
        return self._providers


def _bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()
