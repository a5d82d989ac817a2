"""What one invocation did, for its log line and its metrics: the kit notes facts as it serves a request
(the method, the tool, the session, the error code) and counts events (tool calls, tasks, suspensions);
the Lambda entrypoints write them out once at the end (`observe.powertools`).

Pure Python and cheap: with no invocation open (the dev server, tests), noting and counting do nothing.
The record lives in a context variable, so concurrent task runs in one worker invocation each keep
their own.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Any, Literal, NamedTuple

Unit = Literal["Count", "Milliseconds"]


class Metric(NamedTuple):
    """One metric value (a tuple: every request makes a few, and a tuple is the cheapest to make)."""

    name: str
    value: float
    unit: Unit
    tool: str | None = None
    """The one dimension besides the service: per-tool metrics carry the tool's name."""


class Invocation:
    """One request's (or task run's) record: its correlation id, its fields and its metrics."""

    __slots__ = ("cold_start", "correlation_id", "fields", "metrics", "started")

    def __init__(
        self,
        correlation_id: str | None,
        cold_start: bool = False,
        started: float | None = None,
        fields: dict[str, Any] | None = None,
        metrics: list[Metric] | None = None,
    ) -> None:
        self.correlation_id = correlation_id
        """The API Gateway / Function URL request id (or, on the worker, the one of the request that
        created the task, carried in the queue message)."""
        self.cold_start = cold_start
        self.started = time.perf_counter() if started is None else started
        self.fields: dict[str, Any] = {} if fields is None else fields
        self.metrics: list[Metric] = [] if metrics is None else metrics

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 3)


_current: ContextVar[Invocation | None] = ContextVar("lambda_mcp_invocation", default=None)


class invocation:  # noqa: N801 - used as a function: `with invocation(...) as record`
    """Open the record of one request (or one task run) for the code that runs inside. (A class, not a
    generator-based context manager: it is entered on every request.)"""

    __slots__ = ("record", "token")

    def __init__(self, correlation_id: str | None, *, cold_start: bool = False) -> None:
        self.record = Invocation(correlation_id, cold_start)

    def __enter__(self) -> Invocation:
        self.token = _current.set(self.record)
        return self.record

    def __exit__(self, *exc: object) -> None:
        _current.reset(self.token)


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
