"""Write each invocation's record out through Powertools for AWS Lambda: one JSON log line per request
(Logger) and its metrics in CloudWatch Embedded Metric Format (Metrics); X-Ray (Tracer) only when
`LAMBDA_MCP_TRACING` is on.

Used by the Lambda entrypoints only (the dev server logs as it always did). Importing Logger and Metrics
costs about 7 ms on top of the kit, once per cold start (bench/run.py measures it).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.metrics import EphemeralMetrics

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
        self.logger = Logger(service=self.service, stream=sys.stdout, logger_formatter=self.formatter)
        self.logger.registered_handler.addFilter(CorrelationFilter())
        kit_logger = logging.getLogger("lambda_mcp")  # the kit's own lines: same JSON, same correlation id
        kit_logger.handlers = [self.logger.registered_handler]
        kit_logger.setLevel(self.logger.log_level)
        kit_logger.propagate = False
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
        JSON line per request. (A 2025-03-26 batch that calls several tools adds a line per extra tool.)

        The line has the keys of Powertools Logger's records and is serialized by its formatter, but is
        built here rather than through `logging`, which costs some 35 µs more per request (bench/run.py)."""
        metrics = list(record.metrics)
        if record.cold_start:
            metrics.append(Metric("ColdStart", 1, "Count"))
        now = time.time()
        blobs = self.emf.blobs(metrics, int(now * 1000))
        stream = self.logger.registered_handler.stream  # type: ignore[attr-defined]
        if self.logger.log_level <= logging.INFO:
            line: dict[str, Any] = {
                "level": "INFO",
                "location": "lambda_mcp",
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
            stream.write(self.formatter.serialize({**line, **(blobs.pop(0) if blobs else {})}))
            stream.write("\n")
        for blob in blobs:  # metrics are never dropped with the log line (a WARNING log level)
            stream.write(json.dumps(blob, separators=(",", ":")) + "\n")


def _timestamp(now: float) -> str:
    """Powertools Logger's default timestamp format (`2026-01-01 12:00:00,123+0000`)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now)) + f",{int(now % 1 * 1000):03d}+0000"


class Emf:
    """Metrics as CloudWatch Embedded Metric Format fields. Powertools Metrics builds the directive of each
    set of metrics once (namespace, dimensions, names and units, validated); a request fills in values."""

    def __init__(self, namespace: str, service: str) -> None:
        self.namespace = namespace
        self.service = service
        self._directives: dict[tuple[str | None, tuple[tuple[str, str], ...]], dict[str, Any]] = {}

    def blobs(self, metrics: list[Metric], timestamp_ms: int) -> list[dict[str, Any]]:
        """One EMF object per tool; the service-wide metrics join the first."""
        by_tool: dict[str | None, list[Metric]] = {}
        for metric in metrics:
            by_tool.setdefault(metric.tool, []).append(metric)
        service_wide = by_tool.pop(None, [])
        per_tool = list(by_tool.items())
        first_tool, first_metrics = per_tool.pop(0) if per_tool else (None, [])
        blobs = [self._blob(first_tool, first_metrics, service_wide, timestamp_ms)] if metrics else []
        return blobs + [self._blob(tool, group, [], timestamp_ms) for tool, group in per_tool]

    def _blob(
        self, tool: str | None, tool_metrics: list[Metric], service_metrics: list[Metric], timestamp_ms: int
    ) -> dict[str, Any]:
        directives = [self._directive(tool, tool_metrics)] if tool_metrics else []
        if service_metrics:
            directives.append(self._directive(None, service_metrics))
        blob: dict[str, Any] = {"_aws": {"Timestamp": timestamp_ms, "CloudWatchMetrics": directives}}
        blob["service"] = self.service
        if tool is not None:
            blob["tool"] = tool
        for metric in (*tool_metrics, *service_metrics):
            blob.setdefault(metric.name, []).append(metric.value)
        return blob

    def _directive(self, tool: str | None, metrics: list[Metric]) -> dict[str, Any]:
        names = tuple(dict.fromkeys((m.name, m.unit) for m in metrics))
        key = (tool, names)
        if key not in self._directives:
            emitter = EphemeralMetrics(namespace=self.namespace, service=self.service)
            if tool is not None:
                emitter.add_dimension("tool", tool)
            for name, unit in names:
                emitter.add_metric(name, unit, 0)
            serialized: dict[str, Any] = dict(emitter.serialize_metric_set())
            self._directives[key] = serialized["_aws"]["CloudWatchMetrics"][0]
        return self._directives[key]


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
