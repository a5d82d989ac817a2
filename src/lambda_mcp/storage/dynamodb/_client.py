"""Build the DynamoDB client lazily, and translate botocore errors into kit storage errors."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from ..aws_clients import client, in_thread
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
T = TypeVar("T")
POOL = 32
"""Connections kept per client: no more calls than that run at once (the sweep's concurrency is 16)."""


def default_client() -> Any:
    """A DynamoDB client with standard-mode retries (throttling is retried, then reported), and a
    connection pool as large as the calls the kit makes at once (a sweep's 16, a worker batch's runs and
    watchers; botocore's default of 10 would drop and reopen connections)."""
    return client("dynamodb", retries={"mode": "standard", "max_attempts": 5}, max_pool_connections=POOL)


class LazyClient:
    """Holds an injected client, or builds the default one on first use (never at import). Its calls run
    on a worker thread (`call`, `aws_clients.in_thread`), so a slow or retried DynamoDB call never stalls
    the event loop: other requests, other task runs of a worker batch and cancel watchers go on meanwhile."""

    def __init__(self, client: Any | None, factory: Callable[[], Any] = default_client) -> None:
        self._client = client
        self._factory = factory

    def __call__(self) -> Any:
        if self._client is None:
            self._client = self._factory()
        return self._client

    async def call(self, operation: str, **arguments: Any) -> Any:
        """`client.<operation>(**arguments)` in a worker thread (boto3 clients are thread-safe)."""
        method = getattr(self(), operation)
        return await in_thread(functools.partial(method, **arguments))

    async def run(self, work: Callable[[Any], T]) -> T:
        """`work(client)` in a worker thread: several calls that belong together (a paginated query)."""
        client = self()
        return await in_thread(functools.partial(work, client))


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
