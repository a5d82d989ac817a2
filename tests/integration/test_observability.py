"""What the Lambda functions write to CloudWatch (issue 12): one JSON line per request, carrying the
correlation id (the API's request id), the MCP method, tool, session and task, the status, the JSON-RPC
error, the duration and the cold start, with the request's metrics embedded as EMF; the worker's line for
a task carries the id of the request that queued it; a tool's unexpected exception is logged with its
traceback and never reaches the client.

The HTTP handler runs as it does in Lambda: `lambda-mcp invoke` (one event, a fresh process) and
`lambda-mcp dev --lambda` (events from HTTP requests, the worker fed by the local queue).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from lambda_mcp.local.gateways import http_api_event
from lambda_mcp.observe.invocation import Metric
from lambda_mcp.observe.powertools import MAX_PLANS, Emf
from tests.support.events import body_of
from tests.support.polling import wait_until
from tests.support.processes import ROOT, lambda_mcp_dev

MODERN = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def _invoke(event: dict[str, Any] | Path, app: str, tmp_path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run one event through `lambda-mcp invoke`: the JSON lines it logged, and the Lambda response."""
    path = event if isinstance(event, Path) else tmp_path / "event.json"
    if not isinstance(event, Path):
        path.write_text(json.dumps(event))
    completed = subprocess.run(
        [sys.executable, "-m", "lambda_mcp.cli", "invoke", str(path), "--app", app],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=True,
    )
    lines = [json.loads(line) for line in completed.stderr.splitlines() if line.startswith("{")]
    return lines, json.loads(completed.stdout)  # logs on stderr, the Lambda response on stdout


def _tool_event(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    body["params"]["_meta"] = META
    headers = {"content-type": "application/json", "accept": "application/json", "host": "127.0.0.1", **MODERN}
    headers["mcp-name"] = name
    return http_api_event("POST", "/mcp", headers, json.dumps(body).encode(), "127.0.0.1")


def test_invoke_prints_one_json_line_for_the_request_with_its_metrics(tmp_path: Path) -> None:
    event = ROOT / "events/http-api-v2/modern_tools_call.json"
    lines, response = _invoke(event, "examples/conformance/server.py", tmp_path)
    assert response["statusCode"] == 200
    (line,) = lines
    assert line["correlation_id"] == json.loads(event.read_text())["requestContext"]["requestId"]
    assert (line["mcp_method"], line["tool_name"], line["protocol_version"]) == (
        "tools/call",
        "test_simple_text",
        MODERN["mcp-protocol-version"],
    )
    assert line["status"] == 200 and line["cold_start"] is True and 0 < line["duration_ms"] < 10_000
    assert line["level"] == "INFO" and line["message"] == "request" and "jsonrpc_error" not in line
    directives = {tuple(d["Dimensions"][0]): d for d in line["_aws"]["CloudWatchMetrics"]}
    assert {m["Name"] for m in directives[("tool", "service")]["Metrics"]} == {"ToolCalls", "ToolLatency"}
    assert {m["Name"] for m in directives[("service",)]["Metrics"]} == {"ColdStart"}
    assert line["ToolCalls"] == [1] and line["ColdStart"] == [1] and line["tool"] == "test_simple_text"
    assert all(d["Namespace"] == "lambda-mcp" for d in directives.values())


def test_an_unexpected_tool_error_is_logged_with_its_traceback_and_never_reaches_the_client(tmp_path: Path) -> None:
    lines, response = _invoke(_tool_event("leaky", {}), "tests/apps/observed.py", tmp_path)
    answered = json.loads(body_of(response))["result"]
    text = answered["content"][0]["text"]
    assert answered["isError"] is True and "secret" not in body_of(response) and "hunter2" not in body_of(response)
    reference = text.rsplit("reference ", 1)[1].rstrip(")")
    error, request = lines
    assert error["level"] == "ERROR" and error["error_reference"] == reference
    assert "RuntimeError: secret" in error["exception"] and "Traceback" in error["exception"]
    assert error["correlation_id"] == request["correlation_id"] and request["ToolErrors"] == [1]


def test_a_tool_error_is_the_users_message_and_no_error_is_logged(tmp_path: Path) -> None:
    lines, response = _invoke(_tool_event("picky", {"city": "Lima"}), "tests/apps/observed.py", tmp_path)
    answered = json.loads(body_of(response))["result"]
    assert answered["isError"] is True
    assert answered["content"][0]["text"] == "No forecast for Lima: pick a city in Europe"
    (request,) = lines
    assert request["ToolErrors"] == [1] and request["status"] == 200


def test_a_refused_request_logs_its_json_rpc_error(tmp_path: Path) -> None:
    event = _tool_event("no_such_tool", {})
    lines, response = _invoke(event, "tests/apps/observed.py", tmp_path)
    (request,) = lines
    assert request["jsonrpc_error"] == -32602 and request["status"] == response["statusCode"]
    assert request["tool_name"] == "no_such_tool" and "ToolCalls" not in request


def test_the_workers_line_for_a_task_carries_the_correlation_id_of_the_request_that_queued_it(
    tmp_path: Path,
) -> None:
    server = lambda_mcp_dev(  # --json-logs: the request's JSON line, as CloudWatch gets it (not the readable one)
        "tests/apps/observed.py", through_lambda=True, log=tmp_path / "server.log", extra_args=["--json-logs"]
    )
    try:
        meta = {
            **META,
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        }
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "report", "arguments": {"label": "q3"}, "_meta": meta},
        }
        headers = {"accept": "application/json", **MODERN, "mcp-name": "report"}
        created = httpx.post(server.url, json=body, headers=headers, timeout=30).json()["result"]
        task_id = created["taskId"]

        def logged() -> list[dict[str, Any]] | None:
            lines = [json.loads(x) for x in server.output().splitlines() if x.startswith('{"level"')]
            return lines if any(line.get("message") == "task run" for line in lines) else None

        lines = wait_until(logged, what="the worker's line for the task run")
    finally:
        server.stop()
    (request,) = [line for line in lines if line.get("message") == "request" and line.get("task_id") == task_id]
    (run,) = [line for line in lines if line.get("message") == "task run"]
    assert run["task_id"] == task_id and run["outcome"] == "completed"
    assert run["correlation_id"] == request["correlation_id"] is not None
    assert request["TasksCreated"] == [1] and run["TasksCompleted"] == [1] and run["ToolCalls"] == [1]


def test_emf_groups_metrics_by_tool_and_builds_each_directive_once() -> None:
    emf = Emf("acme", "weather")
    metrics = [
        Metric("ToolCalls", 1, "Count", "forecast"),
        Metric("ToolLatency", 3.5, "Milliseconds", "forecast"),
        Metric("TasksCreated", 1, "Count"),
        Metric("ToolCalls", 1, "Count", "alerts"),
    ]
    fragments = emf.fragments(metrics, 1_800_000_000_000)
    first, second = (json.loads("{" + fragment.text + "}") for fragment in fragments)
    assert first["tool"] == "forecast" and first["TasksCreated"] == [1] and first["ToolLatency"] == [3.5]
    assert [d["Dimensions"] for d in first["_aws"]["CloudWatchMetrics"]] == [[["tool", "service"]], [["service"]]]
    assert first["_aws"]["Timestamp"] == 1_800_000_000_000
    assert set(fragments[0].keys) == set(first) and set(fragments[1].keys) == set(second)
    assert second["tool"] == "alerts" and "TasksCreated" not in second and second["service"] == "weather"
    directives = dict(emf._directives)
    again = emf.fragments(metrics, 1_800_000_000_001)
    assert emf._directives == directives and len(directives) == 3  # built once, then reused
    assert json.loads("{" + again[0].text + "}")["_aws"]["Timestamp"] == 1_800_000_000_001
    assert emf.fragments([], 0) == []


@pytest.mark.parametrize(
    "values", [[1], [3.5, 0.1], [1e-07, 1e22, -0.0], [2**70, True], [float("nan")], [float("inf"), 7]]
)
def test_emf_values_are_written_as_json_writes_them(values: list[float]) -> None:
    """Values are formatted from a cached plan, not through `json`: the text is the same (a repeated name
    keeps every value, in order; what is not a finite number goes through `json`)."""
    emf = Emf("acme", "weather")
    metrics = [Metric("ToolLatency", value, "Milliseconds", "forecast") for value in values]
    (fragment,) = emf.fragments([*metrics, Metric("Requests", 2, "Count")], 1)
    assert fragment.text.endswith(f'"ToolLatency":{json.dumps(values, separators=(",", ":"))},"Requests":[2]')


def test_emf_keeps_a_bounded_number_of_plans() -> None:
    emf = Emf("acme", "weather")
    for n in range(1, 300):  # a 2025-03-26 batch: each number of calls is another set of metrics
        fragments = emf.fragments([Metric("ToolCalls", 1, "Count", "forecast")] * n, 1)
        assert json.loads("{" + fragments[0].text + "}")["ToolCalls"] == [1] * n
    assert len(emf._plans) == MAX_PLANS


def test_a_log_line_is_one_json_object_whose_metrics_win_over_noted_fields() -> None:
    import io

    from lambda_mcp.config import Settings
    from lambda_mcp.observe.invocation import invocation
    from lambda_mcp.observe.powertools import Observer

    observer = Observer(Settings(), "weather")
    out = io.StringIO()
    observer.logger.registered_handler.stream = out  # type: ignore[attr-defined]
    with invocation("req-1", cold_start=True) as record:
        record.fields.update({"tool": "noted", "ToolCalls": "noted", "label": "é"})
        record.metrics.extend([Metric("ToolCalls", 1, "Count", "forecast"), Metric("ToolCalls", 1, "Count", "alerts")])
    observer.write(record, "request", status=200)
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["level"] == "INFO" and first["message"] == "request" and first["status"] == 200
    assert first["correlation_id"] == "req-1" and first["cold_start"] is True and first["label"] == "é"
    assert first["tool"] == "forecast" and first["ToolCalls"] == [1] and first["ColdStart"] == [1]
    assert second == {**second, "tool": "alerts", "ToolCalls": [1], "service": "weather"} and "message" not in second
    for line in out.getvalue().splitlines():  # no key twice in one object
        json.loads(line, object_pairs_hook=lambda pairs: _unique(dict(pairs), pairs))


def _unique(members: dict[str, Any], pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    assert len(members) == len(pairs), [key for key, _ in pairs]
    return members


@pytest.mark.parametrize("level", ["WARNING", "ERROR"])
def test_metrics_are_written_even_when_the_log_level_hides_the_request_line(level: str, tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(_tool_event("report", {"label": "x"})))
    completed = subprocess.run(
        [sys.executable, "-m", "lambda_mcp.cli", "invoke", str(event), "--app", "tests/apps/observed.py"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=True,
        env={**__import__("os").environ, "POWERTOOLS_LOG_LEVEL": level},
    )
    (emf_line,) = [json.loads(x) for x in completed.stderr.splitlines() if x.startswith('{"_aws"')]
    assert emf_line["ToolCalls"] == [1] and "message" not in emf_line
    assert '"message":"request"' not in completed.stderr
