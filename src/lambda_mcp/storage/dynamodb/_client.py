"""Build the DynamoDB client lazily, and translate botocore errors into kit storage errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import ConflictError, StorageError, StorageUnavailable

TRANSIENT = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
        "LimitExceededException",
    }
)
"""Error codes of DynamoDB that a later retry may get past (botocore has already retried them)."""


def default_client() -> Any:
    """A DynamoDB client with standard-mode retries (throttling is retried, then reported)."""
    import boto3
    from botocore.config import Config

    return boto3.client("dynamodb", config=Config(retries={"mode": "standard", "max_attempts": 5}))


class LazyClient:
    """Holds an injected client, or builds the default one on first use (never at import)."""

    def __init__(self, client: Any | None, factory: Callable[[], Any] = default_client) -> None:
        self._client = client
        self._factory = factory

    def __call__(self) -> Any:
        if self._client is None:
            self._client = self._factory()
        return self._client


@contextmanager
def translated(on_condition: type[StorageError] = ConflictError, what: str = "") -> Iterator[None]:
    """Map `ConditionalCheckFailedException` to `on_condition`, every other botocore error to StorageError."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        yield
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        if code == "ConditionalCheckFailedException":
            raise on_condition(what or "conditional write failed") from exc
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if code in TRANSIENT or (isinstance(status, int) and status >= 500):
            raise StorageUnavailable(f"DynamoDB {code or status}: {exc}") from exc
        raise StorageError(f"DynamoDB {code or 'error'}: {exc}") from exc
    except BotoCoreError as exc:
        raise StorageUnavailable(f"DynamoDB unreachable: {exc}") from exc
