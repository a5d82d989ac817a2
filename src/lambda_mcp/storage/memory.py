"""In-memory adapters: the reference semantics of each storage port, used by `dev` and unit tests."""

from __future__ import annotations

import bisect
import copy
import secrets
import threading
from typing import Any

from ..protocol.ids import EventId, change_cursor, parse_event_id
from .cursors import decode_cursor, encode_cursor
from .errors import ConflictError, LimitExceeded, NotFoundError
from .records import CallRecord, Change, SessionRecord, StepRecord, StoredEvent, TaskRecord, listed


class InMemorySessionStore:
    def __init__(self) -> None:
        self._items: dict[str, SessionRecord] = {}
        self._terminated: set[str] = set()

    async def create(self, record: SessionRecord) -> None:
        if record.session_id in self._items or record.session_id in self._terminated:
            raise ConflictError(f"session {record.session_id} exists")
        self._items[record.session_id] = copy.deepcopy(record)

    def _live(self, session_id: str, now: float | None = None) -> SessionRecord:
        record = self._items.get(session_id)
        if record is None or (now is not None and record.expires_at <= now):
            raise NotFoundError(session_id)
        return record

    async def get(self, session_id: str, now: float) -> SessionRecord | None:
        try:
            return copy.deepcopy(self._live(session_id, now))
        except NotFoundError:
            return None

    async def touch(self, session_id: str, now: float, expires_at: float) -> None:
        record = self._live(session_id, now)
        record.expires_at = expires_at
        record.touched_at = now

    async def set_log_level(self, session_id: str, level: str) -> None:
        self._live(session_id).log_level = level

    async def subscribe(self, session_id: str, uri: str, subscribed: bool, *, limit: int | None = None) -> None:
        subscriptions = self._live(session_id).subscriptions
        if subscribed:
            if limit is not None and uri not in subscriptions and len(subscriptions) >= limit:
                raise LimitExceeded(f"session {session_id} holds {limit} subscriptions")
            subscriptions.add(uri)
        else:
            subscriptions.discard(uri)

    async def terminate(self, session_id: str) -> None:
        self._live(session_id)
        del self._items[session_id]
        self._terminated.add(session_id)


class InMemoryEventLog:
    """Event ids are `<stream>.<seq>.<nonce>` (`protocol.ids.EventId`): the stream, its counter (or the
    position its writer gave, `put`), a nonce. Each stream's events are kept in `seq` order."""

    def __init__(self) -> None:
        self._streams: dict[tuple[str, str], list[StoredEvent]] = {}
        self._lock = threading.Lock()  # `dev --lambda` workers append from their own threads

    async def append(
        self, session_id: str, stream_id: str, message: dict[str, object] | None, *, expires_at: float | None = None
    ) -> StoredEvent:
        with self._lock:  # nothing expires in memory
            events = self._streams.setdefault((session_id, stream_id), [])
            seq = len(events) + 1
            event = StoredEvent(stream_id, seq, EventId.new(stream_id, seq).format(), message)
            events.append(event)
            return event

    async def put(
        self,
        session_id: str,
        stream_id: str,
        seq: int,
        message: dict[str, object] | None,
        *,
        expires_at: float | None = None,
    ) -> bool:
        with self._lock:
            events = self._streams.setdefault((session_id, stream_id), [])
            if any(event.seq == seq for event in events):
                return False
            event = StoredEvent(stream_id, seq, EventId.new(stream_id, seq).format(), message)
            bisect.insort(events, event, key=lambda e: e.seq)  # in position order, as `read` returns them
            return True

    async def after(self, session_id: str, event_id: str) -> tuple[str, list[StoredEvent]] | None:
        parsed = parse_event_id(event_id)
        if parsed is None:
            return None
        stream_id = parsed.stream
        with self._lock:
            events = list(self._streams.get((session_id, stream_id)) or [])
        for index, event in enumerate(events):
            if event.event_id == event_id:
                return stream_id, events[index + 1 :]
        return None

    async def get(self, session_id: str, event_id: str) -> StoredEvent | None:
        parsed = parse_event_id(event_id)
        if parsed is None:
            return None
        with self._lock:
            events = list(self._streams.get((session_id, parsed.stream)) or [])
        return next((event for event in events if event.event_id == event_id), None)

    async def read(self, session_id: str, stream_id: str, after_seq: int = 0) -> list[StoredEvent]:
        with self._lock:
            return [event for event in self._streams.get((session_id, stream_id)) or [] if event.seq > after_seq]


class InMemoryCallStore:
    def __init__(self) -> None:
        self._items: dict[tuple[str, str], CallRecord] = {}
        self._lock = threading.Lock()

    async def start(self, record: CallRecord) -> CallRecord:
        with self._lock:
            previous = self._items.get((record.session_id, record.stream_id))
            stored = copy.deepcopy(record)
            stored.answers = {}
            stored.version = 1
            if previous is not None:
                stored.cancelled_at = previous.cancelled_at
            self._items[(record.session_id, record.stream_id)] = stored
            return copy.deepcopy(stored)

    async def get(self, session_id: str, stream_id: str, now: float) -> CallRecord | None:
        with self._lock:
            record = self._items.get((session_id, stream_id))
            return copy.deepcopy(record) if record is not None and record.expires_at > now else None

    async def save(self, record: CallRecord) -> CallRecord:
        with self._lock:
            stored = self._items.get((record.session_id, record.stream_id))
            if stored is None or stored.nonce != record.nonce or stored.version != record.version:
                raise ConflictError(f"call {record.stream_id} changed")
            stored.delivered, stored.checkpoints = record.delivered, record.checkpoints
            stored.awaiting = list(record.awaiting)
            stored.response, stored.expires_at = copy.deepcopy(record.response), record.expires_at
            stored.version += 1
            return copy.deepcopy(stored)

    async def answer(self, session_id: str, stream_id: str, nonce: str, key: str, response: dict[str, Any]) -> bool:
        with self._lock:
            stored = self._items.get((session_id, stream_id))
            if stored is None or not nonce or stored.nonce != nonce or key in stored.answers:
                return False
            stored.answers[key] = copy.deepcopy(response)
            return True

    async def cancel(self, session_id: str, stream_id: str, now: float) -> CallRecord | None:
        with self._lock:
            stored = self._items.get((session_id, stream_id))
            if stored is None or stored.expires_at <= now:
                return None
            stored.cancelled_at = now
            return copy.deepcopy(stored)


class InMemoryChangeLog:
    def __init__(self, ttl_seconds: float = 3600.0) -> None:
        self._entries: list[tuple[float, Change]] = []
        self._ttl = ttl_seconds
        self._lock = threading.Lock()

    async def publish(self, kind: str, uri: str | None, now: float, principal: str | None = None) -> Change:
        change = Change(change_cursor(now, secrets.token_hex(4)), kind, uri, principal)
        with self._lock:
            self._entries = [(expires, c) for expires, c in self._entries if expires > now]
            self._entries.append((now + self._ttl, change))
            self._entries.sort(key=lambda entry: entry[1].cursor)
        return change

    async def since(self, cursor: str, now: float, limit: int = 100) -> list[Change]:
        with self._lock:
            return [c for expires, c in self._entries if c.cursor > cursor and expires > now][:limit]


class InMemoryTaskStore:
    """Safe to share between the request loop and worker threads (`lambda-mcp dev --lambda`): every method
    holds a lock."""

    def __init__(self) -> None:
        self._items: dict[str, TaskRecord] = {}
        self._stopped: set[str] = set()
        self._retry_keys: dict[str, tuple[str, float]] = {}
        self._steps: dict[str, dict[str, tuple[StepRecord, float]]] = {}
        """Each task's checkpoints by name, with their expiry."""
        self._lock = threading.Lock()

    async def create(self, record: TaskRecord) -> None:
        with self._lock:
            if record.task_id in self._items:
                raise ConflictError(f"task {record.task_id} exists")
            self._items[record.task_id] = copy.deepcopy(record)

    async def get(self, task_id: str, now: float) -> TaskRecord | None:
        with self._lock:
            record = self._items.get(task_id)
            return copy.deepcopy(record) if record is not None and record.live(now) else None

    async def save(self, record: TaskRecord) -> TaskRecord:
        with self._lock:
            stored = self._items.get(record.task_id)
            if stored is None or stored.version != record.version or stored.terminal:
                raise ConflictError(f"task {record.task_id} changed or is final")
            saved = copy.deepcopy(record)
            saved.version += 1
            self._items[record.task_id] = saved
            return copy.deepcopy(saved)

    async def void(self, record: TaskRecord) -> TaskRecord:
        with self._lock:
            stored = self._items.get(record.task_id)
            if record.version != 0 or (stored is not None and stored.version != 0):
                raise ConflictError(f"task {record.task_id} moved on")
            saved = copy.deepcopy(record)
            saved.version = 1
            self._items[record.task_id] = saved
            return copy.deepcopy(saved)

    async def bind_retry_key(
        self, key: str, task_id: str, now: float, expires_at: float, *, replacing: str | None = None
    ) -> None:
        with self._lock:
            bound = self._retry_keys.get(key)
            live = bound is not None and bound[1] > now
            if (replacing is None and live) or (replacing is not None and (bound is None or bound[0] != replacing)):
                raise ConflictError(f"retry key {key} is bound")
            self._retry_keys[key] = (task_id, expires_at)

    async def retry_key_task(self, key: str, now: float) -> str | None:
        with self._lock:
            bound = self._retry_keys.get(key)
            return bound[0] if bound is not None and bound[1] > now else None

    async def list_owned(
        self, owner: str, now: float, cursor: str | None = None, limit: int = 50
    ) -> tuple[list[TaskRecord], str | None]:
        with self._lock:
            owned = [r for r in self._items.values() if r.owner == owner and r.live(now)]
        mine = sorted(
            owned,
            key=lambda r: (r.created_at, r.task_id),
        )
        if cursor is not None:
            position = decode_cursor(cursor)
            after = (float(str(position.get("c", 0))), str(position.get("t", "")))
            mine = [r for r in mine if (r.created_at, r.task_id) > after]
        page = mine[:limit]
        more = len(mine) > limit
        last = page[-1] if page else None
        next_cursor = encode_cursor({"c": last.created_at, "t": last.task_id}) if more and last else None
        return [listed(copy.deepcopy(r)) for r in page], next_cursor

    async def list_due(self, now: float, limit: int = 100) -> list[str]:
        with self._lock:
            due = [r for r in self._items.values() if r.sweepable and r.due_at <= now]
        due.sort(key=lambda r: (r.due_at, r.task_id))
        return [r.task_id for r in due[:limit]]

    async def mark_stopped(self, task_id: str, expires_at: float) -> None:
        with self._lock:
            self._stopped.add(task_id)

    async def stopped(self, task_id: str, now: float) -> bool:
        with self._lock:
            return task_id in self._stopped

    async def drop_due(self, task_id: str) -> None:
        with self._lock:
            stored = self._items.get(task_id)
            if stored is not None:
                stored.due_at = 0.0

    async def steps(self, task_id: str, now: float) -> dict[str, StepRecord]:
        with self._lock:
            kept = self._steps.get(task_id, {})
            return {name: copy.deepcopy(step) for name, (step, expires) in kept.items() if expires > now}

    async def start_step(self, task_id: str, name: str, run: str, expires_at: float) -> None:
        with self._lock:
            kept = self._steps.setdefault(task_id, {})
            if name in kept:
                raise ConflictError(f"task {task_id}: step {name} is recorded")
            kept[name] = (StepRecord(name, False, None, run), expires_at)

    async def finish_step(self, task_id: str, name: str, run: str, result: Any, expires_at: float) -> None:
        with self._lock:
            kept = self._steps.setdefault(task_id, {})
            if name in kept and kept[name][0].done:
                raise ConflictError(f"task {task_id}: step {name} is done")
            kept[name] = (StepRecord(name, True, copy.deepcopy(result), run), expires_at)

    async def drop_step(self, task_id: str, name: str, run: str) -> None:
        with self._lock:
            kept = self._steps.get(task_id, {})
            step = kept.get(name)
            if step is not None and not step[0].done and step[0].run == run:
                del kept[name]
