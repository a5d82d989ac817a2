"""In-memory adapters: the reference semantics of each storage port, used by `dev` and unit tests."""

from __future__ import annotations

import copy
import secrets
import threading

from .errors import ConflictError, NotFoundError
from .records import SessionRecord, StoredEvent


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

    async def subscribe(self, session_id: str, uri: str, subscribed: bool) -> None:
        subscriptions = self._live(session_id).subscriptions
        if subscribed:
            subscriptions.add(uri)
        else:
            subscriptions.discard(uri)

    async def terminate(self, session_id: str) -> None:
        self._live(session_id)
        del self._items[session_id]
        self._terminated.add(session_id)


class InMemoryEventLog:
    """Event ids are `<stream>.<seq>.<nonce>`: the stream, its counter, and a nonce for uniqueness."""

    def __init__(self) -> None:
        self._streams: dict[tuple[str, str], list[StoredEvent]] = {}
        self._lock = threading.Lock()  # `dev --lambda` workers append from their own threads

    async def append(self, session_id: str, stream_id: str, message: dict[str, object] | None) -> StoredEvent:
        with self._lock:
            events = self._streams.setdefault((session_id, stream_id), [])
            seq = len(events) + 1
            event = StoredEvent(stream_id, seq, f"{stream_id}.{seq}.{secrets.token_hex(4)}", message)
            events.append(event)
            return event

    async def after(self, session_id: str, event_id: str) -> tuple[str, list[StoredEvent]] | None:
        stream_id = event_id.split(".", 1)[0]
        with self._lock:
            events = list(self._streams.get((session_id, stream_id)) or [])
        for index, event in enumerate(events):
            if event.event_id == event_id:
                return stream_id, events[index + 1 :]
        return None
