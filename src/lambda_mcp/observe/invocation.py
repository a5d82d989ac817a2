"""What one invocation did, for its log line and its metrics: the kit notes facts as it serves a request
(the method, the tool, the session, the error code) and counts events (tool calls, tasks, suspensions);
the Lambda entrypoints write them out once at the end (`observe.powertools`).

Pure Python and cheap: with no invocation open (the dev server, tests), noting and counting do nothing.
The record lives in a context variable, so concurrent task runs in one worker invocation each keep
their own.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

Unit = Literal["Count", "Milliseconds"]


@dataclass(frozen=True)
class Metric:
    name: str
    value: float
    unit: Unit
    tool: str | None = None
    """The one dimension besides the service: per-tool metrics carry the tool's name."""


@dataclass
class Invocation:
    correlation_id: str | None
    """The API Gateway / Function URL request id (or, on the worker, the one of the request that
    created the task, carried in the queue message)."""
    cold_start: bool = False
    started: float = field(default_factory=time.perf_counter)
    fields: dict[str, Any] = field(default_factory=dict)
    metrics: list[Metric] = field(default_factory=list)

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 3)


_current: ContextVar[Invocation | None] = ContextVar("lambda_mcp_invocation", default=None)


@contextmanager
def invocation(correlation_id: str | None, *, cold_start: bool = False) -> Iterator[Invocation]:
    """Open the record of one request (or one task run) for the code that runs inside."""
    record = Invocation(correlation_id, cold_start)
    token = _current.set(record)
    try:
        yield record
    finally:
        _current.reset(token)


def current() -> Invocation | None:
    return _current.get()


def correlation_id() -> str | None:
    record = _current.get()
    return record.correlation_id if record is not None else None


MAX_NOTE_CHARS = 200
"""A noted string is cut to this length: a method or tool name comes from the client."""


def note(**fields: Any) -> None:
    """Record facts about the request for its log line; the first value noted for a field stays
    (a 2025-03-26 batch is logged by its first message)."""
    record = _current.get()
    if record is not None:
        for name, value in fields.items():
            if value is not None:
                record.fields.setdefault(name, value[:MAX_NOTE_CHARS] if isinstance(value, str) else value)


def count(name: str, value: float = 1, *, tool: str | None = None) -> None:
    record = _current.get()
    if record is not None:
        record.metrics.append(Metric(name, value, "Count", tool))


def milliseconds(name: str, value: float, *, tool: str | None = None) -> None:
    record = _current.get()
    if record is not None:
        record.metrics.append(Metric(name, round(value, 3), "Milliseconds", tool))
