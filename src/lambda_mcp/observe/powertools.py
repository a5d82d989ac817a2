"""Write each invocation's record out through Powertools for AWS Lambda: one JSON log line per request
(Logger) and its metrics in CloudWatch Embedded Metric Format (Metrics); X-Ray (Tracer) only when
`LAMBDA_MCP_TRACING` is on.

Used by the Lambda entrypoints only (the dev server logs as it always did). Importing Logger and Metrics
costs about 7 ms on top of the kit, once per cold start (bench/run.py measures it).
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.metrics import EphemeralMetrics
from aws_lambda_powertools.shared import constants

from ..config import ConfigError, Settings
from .invocation import Invocation, Metric, correlation_id, invocation

Handler = Callable[[dict[str, Any], Any], Any]


class CorrelationFilter(logging.Filter):
    """Stamps every kit log record with the correlation id of the invocation it belongs to (a context
    variable: concurrent task runs in one worker invocation each get their own)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "correlation_id"):
            record.correlation_id = correlation_id()
        return True


class Observer:
    """The Lambda entrypoints' logs and metrics: `http(handler)` and `task_run(...)` open an invocation
    record, and write its log line and metrics when it ends."""

    def __init__(self, settings: Settings, service: str) -> None:
        self.service = os.environ.get("POWERTOOLS_SERVICE_NAME") or service
        self.formatter = LambdaPowertoolsFormatter()
        self._pretty = self.formatter.json_indent != constants.COMPACT_INDENT
        self.logger = Logger(service=self.service, stream=sys.stdout, logger_formatter=self.formatter)
        self._handler: Any = self.logger.registered_handler  # where every line goes (`write` reads its stream)
        self._handler.addFilter(CorrelationFilter())
        kit_logger = logging.getLogger("lambda_mcp")  # the kit's own lines: same JSON, same correlation id
        kit_logger.handlers = [self._handler]
        kit_logger.setLevel(self.logger.log_level)
        kit_logger.propagate = False
        self._level = logging.getLogger(self.logger.name)  # whose level `logger.log_level` reads
        self._cold = True
        self.emf = Emf(settings.metrics_namespace, self.service)
        self.tracer: Any = _tracer(self.service) if settings.tracing else None

    def take_cold_start(self) -> bool:
        cold, self._cold = self._cold, False
        return cold

    def http(self, handler: Handler) -> Handler:
        """Wrap the HTTP handler: one log line and one set of metrics per request."""

        def observed(event: dict[str, Any], context: Any) -> Any:
            with invocation(_request_id(event), cold_start=self.take_cold_start()) as record:
                status = 500
                try:
                    response = handler(event, context)
                    status = int(response.get("statusCode", 500)) if isinstance(response, dict) else 500
                    return response
                finally:
                    self.write(record, "request", status=status)

        return self.tracer.capture_lambda_handler(observed) if self.tracer is not None else observed

    def write(self, record: Invocation, message: str, **fields: Any) -> None:
        """The record's log line (`message` with its fields), which also carries its metrics as EMF: one
        JSON line per request, in one write. (A 2025-03-26 batch that calls several tools adds a line per
        extra tool.)

        The line has the keys of Powertools Logger's records, but is built here rather than through
        `logging`, from parts serialized once (the level and location, the EMF directives): a request
        serializes only what changes, which is some 25 µs less than the formatter on the whole line."""
        metrics = record.metrics
        if record.cold_start:
            metrics = [*metrics, Metric("ColdStart", 1, "Count")]
        now = time.time()
        blobs = self.emf.fragments(metrics, int(now * 1000))
        parts: list[str] = []
        if self._level.level <= logging.INFO:
            line: dict[str, Any] = {
                "message": message,
                "timestamp": _timestamp(now),
                "service": self.service,
                "correlation_id": record.correlation_id,
                **record.fields,
                **fields,
                "duration_ms": record.elapsed_ms(),
                "cold_start": record.cold_start,
            }
            trace = os.environ.get("_X_AMZN_TRACE_ID")
            if trace:
                line["xray_trace_id"] = trace.split(";")[0].removeprefix("Root=")
            parts.append(self._line(line, blobs.pop(0) if blobs else None))
        parts.extend("{" + blob.text + "}\n" for blob in blobs)  # metrics are never dropped with the line
        if parts:
            self._handler.stream.write("".join(parts))

    def _line(self, line: dict[str, Any], blob: Fragment | None) -> str:
        if blob is not None:
            for key in blob.keys:  # the metrics' own keys win, as in a merged dict
                line.pop(key, None)
        if self._pretty:  # POWERTOOLS_DEV (sam local): the formatter's indented JSON
            members = json.loads("{" + blob.text + "}") if blob is not None else {}
            return self.formatter.serialize({"level": "INFO", "location": "lambda_mcp", **line, **members}) + "\n"
        text = _LINE_START + _encode(line)[1:]
        return (text[:-1] + "," + blob.text + "}\n") if blob is not None else text + "\n"


_encode = json.JSONEncoder(default=str, separators=(",", ":"), ensure_ascii=False, check_circular=False).encode
"""The formatter's JSON settings (`default=str`, compact, UTF-8 as is), with one encoder for every line.
No check for cycles: a line holds only the flat values the kit notes."""
_LINE_START = '{"level":"INFO","location":"lambda_mcp",'


class _Clock:
    """Powertools Logger's default timestamp format (`2026-01-01 12:00:00,123+0000`), the seconds part
    formatted once per second."""

    second = -1
    prefix = ""


def _timestamp(now: float) -> str:
    second = int(now)
    if second != _Clock.second:
        _Clock.prefix = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(second))
        _Clock.second = second
    return f"{_Clock.prefix},{int(now % 1 * 1000):03d}+0000"


Plan = list[tuple[str, str, tuple[tuple[str, tuple[int, ...]], ...], tuple[str, ...]]]
"""Per EMF object of a set of metrics: the text before and after its timestamp, each member's key (as JSON,
with its colon) and which of the metrics hold its values, and the keys it holds."""

MAX_PLANS = 256
"""Sets of metrics whose plan is kept (a request's are one of a few; a 2025-03-26 batch's vary)."""


class Fragment:
    """One EMF object's members as JSON text (no braces), and the keys it holds."""

    __slots__ = ("keys", "text")

    def __init__(self, text: str, keys: tuple[str, ...]) -> None:
        self.text = text
        self.keys = keys


class Emf:
    """Metrics as CloudWatch Embedded Metric Format members. Powertools Metrics builds the directive of
    each set of metrics once (namespace, dimensions, names and units, validated), kept as JSON text with
    the plan of where each metric's value goes; a request serializes only its values."""

    def __init__(self, namespace: str, service: str) -> None:
        self.namespace = namespace
        self.service = service
        self._plans: dict[tuple[tuple[str, str, str | None], ...], Plan] = {}
        self._directives: dict[tuple[str | None, tuple[tuple[str, str], ...]], str] = {}

    def fragments(self, metrics: list[Metric], timestamp_ms: int) -> list[Fragment]:
        """One EMF object per tool; the service-wide metrics join the first."""
        if not metrics:
            return []
        key = tuple([(m.name, m.unit, m.tool) for m in metrics])
        plan = self._plans.get(key) or self._plan(key)
        stamp = str(timestamp_ms)
        return [
            Fragment(head + stamp + tail + ",".join([name + _values(metrics, slots) for name, slots in members]), keys)
            for head, tail, members, keys in plan
        ]

    def _plan(self, key: tuple[tuple[str, str, str | None], ...]) -> Plan:
        """Group a set of metrics by tool (in order; the service-wide ones with the first tool's), as
        Powertools Metrics would emit them, one object per group."""
        by_tool: dict[str | None, list[int]] = {}
        for index, (_name, _unit, tool) in enumerate(key):
            by_tool.setdefault(tool, []).append(index)
        service_wide = by_tool.pop(None, [])
        per_tool: list[tuple[str | None, list[int]]] = list(by_tool.items()) or [(None, [])]
        plan: Plan = []
        for n, (tool, tool_indexes) in enumerate(per_tool):
            service_indexes = service_wide if n == 0 else []
            head, tail, keys = self._shape(
                tool,
                tuple((key[i][0], key[i][1]) for i in tool_indexes),
                tuple((key[i][0], key[i][1]) for i in service_indexes),
            )
            slots: dict[str, list[int]] = {}
            for index in (*tool_indexes, *service_indexes):
                slots.setdefault(key[index][0], []).append(index)
            members = tuple((_encode(name) + ":", tuple(indexes)) for name, indexes in slots.items())
            plan.append((head, tail, members, keys))
        if len(self._plans) < MAX_PLANS:
            self._plans[key] = plan
        return plan

    def _shape(
        self, tool: str | None, tool_names: tuple[tuple[str, str], ...], service_names: tuple[tuple[str, str], ...]
    ) -> tuple[str, str, tuple[str, ...]]:
        """The text around an object's timestamp and values, and its keys, for one set of metric names."""
        directives = [self._directive(tool, tool_names)] if tool_names else []
        if service_names:
            directives.append(self._directive(None, service_names))
        tail = f',"CloudWatchMetrics":[{",".join(directives)}]}},"service":{_encode(self.service)}'
        keys = ("_aws", "service", *dict.fromkeys(name for name, _unit in (*tool_names, *service_names)))
        if tool is not None:
            tail += ',"tool":' + _encode(tool)
            keys += ("tool",)
        return '"_aws":{"Timestamp":', tail + ",", keys

    def _directive(self, tool: str | None, names: tuple[tuple[str, str], ...]) -> str:
        names = tuple(dict.fromkeys(names))
        key = (tool, names)
        directive = self._directives.get(key)
        if directive is None:
            emitter = EphemeralMetrics(namespace=self.namespace, service=self.service)
            if tool is not None:
                emitter.add_dimension("tool", tool)
            for name, unit in names:
                emitter.add_metric(name, unit, 0)
            serialized: dict[str, Any] = dict(emitter.serialize_metric_set())
            directive = self._directives[key] = json.dumps(
                serialized["_aws"]["CloudWatchMetrics"][0], separators=(",", ":")
            )
        return directive


def _values(metrics: list[Metric], slots: tuple[int, ...]) -> str:
    """A member's values as a JSON array: numbers as `json` writes them (`repr`), others through it."""
    return "[" + ",".join([_number(metrics[i].value) for i in slots]) + "]"


def _number(value: float) -> str:
    kind = type(value)
    if kind is int or (kind is float and math.isfinite(value)):
        return repr(value)
    return _encode(value)


def _request_id(event: dict[str, Any]) -> str | None:
    """API Gateway (REST and HTTP APIs) and Function URLs all put the request id here."""
    context = event.get("requestContext")
    request_id = context.get("requestId") if isinstance(context, dict) else None
    return request_id if isinstance(request_id, str) else None


def _tracer(service: str) -> Any:
    try:
        from aws_lambda_powertools import Tracer  # imports aws-xray-sdk, and patches boto3: only when asked
    except ImportError as exc:  # pragma: no cover - depends on the deployment's layer
        raise ConfigError("LAMBDA_MCP_TRACING=on needs aws-xray-sdk in the function's layer") from exc
    return Tracer(service=service)
