"""The one rule for a conditional write whose outcome is not known: re-read, and recognise its own write.

A write can land and still be reported as a failure:
- DynamoDB applies it, answers 500, and botocore's retry of it then fails its own condition
  (`ConflictError`), because the item already holds what the first attempt wrote;
- every retry fails, or the client stops retrying (its quota is dry): `StorageUnavailable`, whether or
  not one of the attempts was applied.

So a write the kit must not take for lost (a task's create, claim, settle or answer; the facade's
refresh-token swap, code mark and taken pending authorization, a client's registration) goes through
`confirmed`: on either failure it re-reads (a consistent read) and asks `landed` whether the stored
state is its own write. Each write makes its own recognisable: by the record's next version and
content, by a digest only it could write, or by a nonce it stamped. Then:

| the write reported | the re-read finds | `confirmed` |
|---|---|---|
| success | (not read) | returns the write's answer |
| `ConflictError` | its own write | returns what it found: the write landed |
| `ConflictError` | anything else | raises `ConflictError`: another write won |
| `StorageUnavailable` | its own write | returns what it found |
| `StorageUnavailable` | anything else | raises `StorageUnavailable`: not written (yet) |
| either | the re-read fails too | raises `Unconfirmed`: nobody can tell |

A write reported unavailable may still be applied later (a request still in flight), which only a
condition can stop: callers whose write must never land late make a later write conflict with it
(a task's create is voided with a conditional write, so a late create fails its condition).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from .errors import ConflictError, StorageError, StorageUnavailable

logger = logging.getLogger("lambda_mcp")
T = TypeVar("T")
S = TypeVar("S")


class Unconfirmed(StorageUnavailable):
    """A write that may or may not have landed: it failed, and so did the read that would have told."""


async def confirmed(
    write: Callable[[], Awaitable[T]],
    reread: Callable[[], Awaitable[S | None]],
    landed: Callable[[S], bool],
    what: str = "a write",
) -> T | S:
    """Run `write`; when it reports a conflict or an outage, what `reread` finds if `landed` says it is the
    write's own (see the module's table)."""
    try:
        return await write()
    except (ConflictError, StorageUnavailable) as exc:
        failure = exc
    try:
        stored = await reread()
    except StorageError as exc:
        raise Unconfirmed(f"{what} may have landed, and the re-read that would tell failed: {exc}") from failure
    if stored is not None and landed(stored):
        logger.info("%s landed though it was reported as failed (%s); going on", what, type(failure).__name__)
        return stored
    raise failure
