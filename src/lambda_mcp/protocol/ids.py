"""Every id the kit mints and parses, as typed values: `format()` writes one, `parse_*` reads one back
(None for anything the kit did not mint, never an exception).

| id | text |
|---|---|
| session, task | 32 URL-safe random characters |
| event-log stream of a suspended legacy call | `call~<request id>` |
| stream of a buffered `tasks/result` wait | `taskresult~<task id>~<request id>` |
| stream of a task's notifications | `task-<task id>` |
| stream of a live call (streaming server) | `live~<16 hex>` |
| SSE event id | `<stream>.<seq>.<8 hex>` |
| position in the change feed (a GET stream's event id) | `changes~<cursor>`, cursor `<17 digits>-<suffix>` |
| server-to-client request of a suspended call | `srv.<call stream>.<input key>.<nonce>` |
| server-to-client request of a task | `task.<task id>.<input key>` |
| server-to-client request of a live call | `s-<random>` |

Request ids and input keys are written as unpadded base64url (`b64url`), whose alphabet has no `.`
or `~`: so `.` separates the parts of event and request ids, and `~` those of stream names.
"""

from __future__ import annotations

import secrets

from . import b64url
from .jsonrpc import RequestId
from .limits import MAX_TASK_ID_CHARS
from .values import Value, set_field

_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_HEX = frozenset("0123456789abcdef")


def _token(text: str) -> bool:
    return bool(text) and set(text) <= _ALPHABET


def new_session_id() -> str:
    """An unguessable legacy session id (192 random bits)."""
    return secrets.token_urlsafe(24)


def new_task_id() -> str:
    """An unguessable task id (192 random bits): ids may act as bearer handles."""
    return secrets.token_urlsafe(24)


def could_be_task_id(text: str) -> bool:
    """Whether `text` has the shape of an id this kit mints (URL-safe, at most `MAX_TASK_ID_CHARS`), so
    anything else is answered "unknown" without a read or a key built from it."""
    return len(text) <= MAX_TASK_ID_CHARS and text.isascii() and text.replace("-", "").replace("_", "").isalnum()


# -- event-log streams --------------------------------------------------------------------------
class CallStream(Value):
    """The event-log stream of a legacy call suspended on a buffered transport."""

    __slots__ = ("request_id",)
    request_id: RequestId
    PREFIX = "call~"

    def __init__(self, request_id: RequestId) -> None:
        set_field(self, "request_id", request_id)

    def format(self) -> str:
        return self.PREFIX + b64url.encode_request_id(self.request_id)


class WaitStream(Value):
    """The event-log stream of a buffered legacy `tasks/result` wait: it names the request to re-run."""

    __slots__ = ("task_id", "request_id")
    task_id: str
    request_id: RequestId
    PREFIX = "taskresult~"

    def __init__(self, task_id: str, request_id: RequestId) -> None:
        set_field(self, "task_id", task_id)
        set_field(self, "request_id", request_id)

    def format(self) -> str:
        return f"{self.PREFIX}{self.task_id}~{b64url.encode_request_id(self.request_id)}"


class TaskStream(Value):
    """The event-log stream of what a legacy task's runs send (relayed by `tasks/result`)."""

    __slots__ = ("task_id",)
    task_id: str
    PREFIX = "task-"

    def __init__(self, task_id: str) -> None:
        set_field(self, "task_id", task_id)

    def format(self) -> str:
        return self.PREFIX + self.task_id


class LiveStream(Value):
    """The stream of a call a streaming server is running."""

    __slots__ = ("token",)
    token: str
    PREFIX = "live~"

    def __init__(self, token: str) -> None:
        set_field(self, "token", token)

    @classmethod
    def new(cls) -> LiveStream:
        return cls(secrets.token_hex(8))

    def format(self) -> str:
        return self.PREFIX + self.token


Stream = CallStream | WaitStream | TaskStream | LiveStream


def parse_stream(text: str) -> Stream | None:
    if text.startswith(CallStream.PREFIX):
        request_id = b64url.decode_request_id(text[len(CallStream.PREFIX) :])
        return None if request_id is None else CallStream(request_id)
    if text.startswith(WaitStream.PREFIX):
        task_id, separator, encoded = text[len(WaitStream.PREFIX) :].partition("~")
        request_id = b64url.decode_request_id(encoded) if separator else None
        return None if request_id is None or not _token(task_id) else WaitStream(task_id, request_id)
    if text.startswith(TaskStream.PREFIX):
        task_id = text[len(TaskStream.PREFIX) :]
        return TaskStream(task_id) if _token(task_id) else None
    if text.startswith(LiveStream.PREFIX):
        token = text[len(LiveStream.PREFIX) :]
        return LiveStream(token) if len(token) == 16 and set(token) <= _HEX else None
    return None


# -- SSE event ids --------------------------------------------------------------------------------
class EventId(Value):
    """An event of an event-log stream: its stream name, sequence number (from 1) and a nonce."""

    __slots__ = ("stream", "seq", "nonce")
    stream: str
    seq: int
    nonce: str

    def __init__(self, stream: str, seq: int, nonce: str) -> None:
        set_field(self, "stream", stream)
        set_field(self, "seq", seq)
        set_field(self, "nonce", nonce)

    @classmethod
    def new(cls, stream: str, seq: int) -> EventId:
        return cls(stream, seq, secrets.token_hex(4))

    def format(self) -> str:
        return f"{self.stream}.{self.seq}.{self.nonce}"

    @property
    def kind(self) -> Stream | None:
        """The stream's typed name (None for a stream the kit does not mint)."""
        return parse_stream(self.stream)


class ChangesCursor(Value):
    """Where a buffered legacy GET stream's next poll reads the change feed from."""

    __slots__ = ("cursor",)
    cursor: str
    PREFIX = "changes~"

    def __init__(self, cursor: str) -> None:
        set_field(self, "cursor", cursor)

    def format(self) -> str:
        return self.PREFIX + self.cursor


def change_cursor(moment: float, suffix: str = "") -> str:
    """A change-feed cursor: microseconds since the epoch, zero-padded (sortable), then a tie-breaker.
    `change_cursor(now)` reads what is published from now on."""
    return f"{int(moment * 1_000_000):017d}-{suffix}"


def is_change_cursor(text: str) -> bool:
    moment, separator, suffix = text.partition("-")
    return bool(separator) and len(moment) == 17 and moment.isdigit() and (suffix == "" or suffix.isalnum())


MAX_STREAM = 512
"""Longest stream name accepted back: a `tasks/result` wait stream for the longest request id, with room."""


def parse_event_id(text: str) -> EventId | None:
    stream, _, rest = text.partition(".")
    seq, _, nonce = rest.partition(".")
    if not 0 < len(stream) <= MAX_STREAM or not (seq.isascii() and seq.isdigit() and len(seq) <= 10):
        return None
    if not 0 < len(nonce) <= 16 or not set(nonce) <= _HEX:
        return None
    return EventId(stream, int(seq), nonce)


def parse_last_event_id(text: str) -> EventId | ChangesCursor | None:
    """A `Last-Event-ID` header: an event of a stream, or a position in the change feed."""
    if text.startswith(ChangesCursor.PREFIX):
        cursor = text[len(ChangesCursor.PREFIX) :]
        return ChangesCursor(cursor) if is_change_cursor(cursor) else None
    return parse_event_id(text)


# -- ids of server-to-client requests ---------------------------------------------------------
class CallInputId(Value):
    """A request of a suspended legacy call to its client: the call, the input key and the call's nonce."""

    __slots__ = ("stream", "key", "nonce")
    stream: CallStream
    key: str
    nonce: str
    PREFIX = "srv."

    def __init__(self, stream: CallStream, key: str, nonce: str) -> None:
        set_field(self, "stream", stream)
        set_field(self, "key", key)
        set_field(self, "nonce", nonce)

    def format(self) -> str:
        return f"{self.PREFIX}{self.stream.format()}.{b64url.encode_text(self.key)}.{self.nonce}"


class TaskInputId(Value):
    """A request of a legacy task to its client (sent by `tasks/result`): the task and the input key."""

    __slots__ = ("task_id", "key")
    task_id: str
    key: str
    PREFIX = "task."

    def __init__(self, task_id: str, key: str) -> None:
        set_field(self, "task_id", task_id)
        set_field(self, "key", key)

    def format(self) -> str:
        return f"{self.PREFIX}{self.task_id}.{b64url.encode_text(self.key)}"


class LiveInputId(Value):
    """A request of a call running on a streaming server to its client."""

    __slots__ = ("token",)
    token: str
    PREFIX = "s-"

    def __init__(self, token: str) -> None:
        set_field(self, "token", token)

    @classmethod
    def new(cls) -> LiveInputId:
        return cls(secrets.token_urlsafe(12))

    def format(self) -> str:
        return self.PREFIX + self.token


InputId = CallInputId | TaskInputId | LiveInputId


def parse_input_id(value: object) -> InputId | None:
    """The server-to-client request a client's response answers (its `id`), if the kit sent it."""
    if not isinstance(value, str):
        return None
    if value.startswith(CallInputId.PREFIX):
        parts = value[len(CallInputId.PREFIX) :].split(".")
        stream = parse_stream(parts[0]) if len(parts) == 3 else None
        key = b64url.decode_text(parts[1]) if isinstance(stream, CallStream) else None
        if not isinstance(stream, CallStream) or key is None or not _token(parts[2]):
            return None
        return CallInputId(stream, key, parts[2])
    if value.startswith(TaskInputId.PREFIX):
        parts = value[len(TaskInputId.PREFIX) :].split(".")
        key = b64url.decode_text(parts[1]) if len(parts) == 2 and _token(parts[0]) else None
        return None if key is None else TaskInputId(parts[0], key)
    if value.startswith(LiveInputId.PREFIX):
        token = value[len(LiveInputId.PREFIX) :]
        return LiveInputId(token) if _token(token) else None
    return None
