"""Creating a task so that neither a lost answer nor a client's retry runs its tool twice.

- **The create's write** goes through the one rule for writes whose outcome is unknown
  (`storage/confirm.py`): a create reported failed whose re-read finds this very record goes on. When
  the re-read fails too (`Unconfirmed`), the task is *voided* before the client is told to retry: a
  conditional `failed` write at version 0, which also stands in for a create that has not landed (yet),
  so a late create fails its condition. So a task the client was told to retry does not run (unless
  the void fails too, which is logged). A create reported unavailable whose re-read finds no item did
  not land: every attempt had been answered before the re-read, and DynamoDB applies a request long
  before the client's read timeout gives up on it. It is not voided (that would add a write per
  attempt to a storage outage).
- **A failed send** (after the SQS client's retries) may still have delivered the message: a send can
  land on every attempt and never answer 200. So the task is failed only while no worker took it (the
  same void, at version 0); when a worker claimed or finished it, the message was delivered and the
  client gets the task.
- **A client's retry** of a `tools/call` that creates a task (the same JSON-RPC id and params, from the
  same principal, and on a legacy session the same session) within `RETRY_WINDOW_SECONDS` gets the task
  the first request created, which it may hold already (its answer lost on the way). The retry key is a
  digest of (owner, session id, JSON-RPC id, method, the params as the task keeps them, the answers it
  starts with), bound to the task in a small item (`TASKKEY#<digest>`, TTL = the window) written
  before the task. A first task the create itself failed (voided, or not queued: the client was told
  to retry) is not returned: the retry takes the key over and makes a new task that runs. A different
  JSON-RPC id is a different key, so a new task. Callers without a principal or a session (2026
  requests under auth `none`) have no key: two clients could not be told apart, and one would be handed
  the other's task.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any

from ..protocol.errors import INTERNAL_ERROR
from ..protocol.jsonrpc import replayable
from ..protocol.names import META_CAPABILITIES, META_VERSION
from ..storage.confirm import Unconfirmed, confirmed
from ..storage.errors import ConflictError, StorageUnavailable
from ..storage.ports import TaskStore
from .model import TaskRecord, transition
from .sweeper import RELEASED
from .writes import voided

logger = logging.getLogger("lambda_mcp")
RETRY_WINDOW_SECONDS = 120.0
"""How long a request's retry gets the task it created: longer than a client's retries with backoff,
shorter than the time after which a client would reuse a JSON-RPC id for a new request."""
RETRYABLE = {"retryable": True}
"""The error `data` of a task the create itself failed: its client was told to retry (503)."""
UNCONFIRMED = "Task could not be created: storage did not confirm the write; create it again"
UNQUEUED = "Task could not be queued for execution"
_TAKEOVERS = 3
VOID_PAUSES = (0.2, 0.5, 1.0)
"""Seconds between the tries of a void: an orphan may run only if all of them fail."""


def kept(params: dict[str, Any]) -> dict[str, Any]:
    """What a task keeps of its request's params: what its run needs (name, arguments, `_meta` for the
    progress token and the app's own keys), less the client capabilities, kept once in their own field."""
    kept: dict[str, Any] = replayable({"params": params})["params"]
    meta = kept.get("_meta")
    if isinstance(meta, dict):
        kept["_meta"] = {k: v for k, v in meta.items() if k not in (META_VERSION, META_CAPABILITIES)}
    return kept


def retry_key(record: TaskRecord) -> str | None:
    """The key a retry of the request that creates `record` shares with it (see the module); None when the
    request has no id, or its caller neither a principal nor a session."""
    if record.request_id is None or (record.owner == "anonymous" and record.session_id is None):
        return None
    request = [
        record.owner,
        record.session_id,
        record.request_id,
        record.method,
        record.params,
        record.input_responses,
    ]
    return hashlib.sha256(json.dumps(request, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def create_failed(record: TaskRecord) -> bool:
    """Whether the create itself failed this task (its client was told to retry)."""
    return record.status == "failed" and (record.error or {}).get("data") == RETRYABLE


async def void(store: TaskStore, clock: Callable[[], float], record: TaskRecord, reason: str) -> TaskRecord | None:
    """Fail the created `record` unless a worker took it (see the module). The record as stored; None when
    the stored task moved on (claimed, cancelled, finished: the caller re-reads). Tried again after each
    of `VOID_PAUSES` (every try is a fresh request, with retries of its own: the one fault that failed the
    create rarely fails them all); raises `StorageError` when it still cannot be written or told."""
    error = {"code": INTERNAL_ERROR, "message": reason, "data": dict(RETRYABLE)}
    failed = transition(record, "failed", clock(), error=error, **RELEASED)
    for pause in (*VOID_PAUSES, None):
        try:
            return await voided(store, clock, failed, f"voiding task {record.task_id}")
        except ConflictError:
            return None
        except StorageUnavailable:
            if pause is None:
                raise
            await asyncio.sleep(pause)
    return None


async def write(store: TaskStore, clock: Callable[[], float], record: TaskRecord) -> None:
    """Write the new task; durable when this returns (see the module for a write reported failed)."""

    def landed(stored: TaskRecord) -> bool:  # this very create, not yet touched
        return stored.version == 0 and (stored.owner, stored.created_at) == (record.owner, record.created_at)

    what = f"task {record.task_id}'s create"
    try:
        await confirmed(lambda: store.create(record), lambda: store.get(record.task_id, clock()), landed, what)
    except Unconfirmed:
        try:
            await void(store, clock, record, UNCONFIRMED)
        except StorageUnavailable:  # it may run after all; the client hears "retry" either way
            logger.exception("task %s: the create may have landed and could not be voided", record.task_id)
        raise
    except ConflictError as exc:  # a retry of the same request voided this id meanwhile (it took the key)
        raise StorageUnavailable(f"task {record.task_id} was taken over by a retry of its request") from exc


async def unqueued(store: TaskStore, clock: Callable[[], float], record: TaskRecord) -> TaskRecord | None:
    """The new task's send failed (see the module): None when the task is now failed (the client is told
    to retry), else the task a worker claimed or finished (the client gets it). When it can be neither
    failed nor read, the client gets the task as created: it is durable and due, so the sweeper queues it
    (telling the client to retry would leave it to run unseen)."""
    try:
        if await void(store, clock, record, UNQUEUED) is not None:
            return None
        delivered = await store.get(record.task_id, clock())
    except StorageUnavailable:
        logger.exception(
            "task %s: not queued, and not voided: the client gets it, the sweeper queues it", record.task_id
        )
        return record
    if delivered is not None:
        logger.info("task %s: its send was reported failed, yet a worker has it (%s)", record.task_id, delivered.status)
    return delivered


async def earlier(store: TaskStore, clock: Callable[[], float], key: str, record: TaskRecord) -> TaskRecord | None:
    """Bind the retry key to the new `record`; or the task an earlier request with the same key created,
    for its retry (see the module). None: `record` holds the key, create it."""
    replacing: str | None = None
    for _ in range(_TAKEOVERS):
        if await _bind(store, clock, key, record.task_id, replacing):
            return None
        first_id = await store.retry_key_task(key, clock())
        if first_id is None:  # expired meanwhile
            replacing = None
            continue
        first = await store.get(first_id, clock())
        if first is None:  # bound by a request that stopped before its task was written (or is writing it)
            stand_in = record.replace(task_id=first_id)
            first = await void(store, clock, stand_in, UNCONFIRMED) or await store.get(first_id, clock())
        if first is not None and not create_failed(first):
            return first
        replacing = first_id
    raise StorageUnavailable(f"the retry key of task {record.task_id} kept changing")


async def _bind(store: TaskStore, clock: Callable[[], float], key: str, task_id: str, replacing: str | None) -> bool:
    """Whether the key now names `task_id` (a bind whose answer was lost is recognised by the re-read)."""
    now = clock()

    async def bind() -> None:
        await store.bind_retry_key(key, task_id, now, now + RETRY_WINDOW_SECONDS, replacing=replacing)

    try:
        await confirmed(bind, lambda: store.retry_key_task(key, clock()), lambda bound: bound == task_id, "a retry key")
    except ConflictError:
        return False
    return True
