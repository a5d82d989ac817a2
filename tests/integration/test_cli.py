"""The `lambda-mcp` console script as a user runs it (a subprocess): one-line errors, `--debug`, module
targets from the current directory, SIGINT, `dev`'s request log and banner, `invoke --tool` and worker events."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import ROOT, free_port

LAMBDA_MCP = str(Path(sys.executable).with_name("lambda-mcp"))
EVENTS = ROOT / "events"
APP = '''
from lambda_mcp import MCPApp

app = MCPApp("demo")
not_an_app = 3


@app.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's project: `app.py` at the top and the same app as module `pkg.server`."""
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "server.py").write_text(APP)
    return tmp_path


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAMBDA_MCP_")}
    return {**env, **extra}


def run(*args: str, cwd: Path, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LAMBDA_MCP, *args], cwd=cwd, env=_env(**env), capture_output=True, text=True, timeout=timeout
    )


def one_line_error(result: subprocess.CompletedProcess[str], command: str, *fragments: str) -> str:
    """Assert `result` failed with exactly one line on stderr, `lambda-mcp COMMAND: ...`, holding `fragments`."""
    assert result.returncode != 0, result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith(f"lambda-mcp {command}: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


# -- one-line errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["dev", "missing.py"], ["no such file: missing.py"]),
        (["dev", "app.py:typo"], ["app.py has no attribute 'typo'", "app.py:NAME"]),
        (["dev", "app.py:not_an_app"], ["app.py:not_an_app is not an MCPApp", "int"]),
        (["dev", "nowhere.app"], ["no module named 'nowhere'", "current directory"]),
        (["dev", "app.app"], ["no module named 'app.app'", "write app:app"]),
        (["dev", "app.py:typo", "--lambda"], ["app.py has no attribute 'typo'"]),
        (["invoke", "--tool", "add", "--app", "app.py:typo"], ["app.py has no attribute 'typo'"]),
    ],
)
def test_a_wrong_app_target_is_one_line_naming_the_problem(
    project: Path, args: list[str], fragments: list[str]
) -> None:
    extra = ["--port", str(free_port())] if args[0] == "dev" else []
    one_line_error(run(*args, *extra, cwd=project), args[0], *fragments)


@pytest.mark.parametrize(
    "args", [["dev", "app.py"], ["dev", "app.py", "--lambda"], ["invoke", "--tool", "add", "--app", "app.py"]]
)
def test_jwt_without_an_issuer_is_one_line_naming_the_setting(project: Path, args: list[str]) -> None:
    extra = ["--port", str(free_port())] if args[0] == "dev" else []
    result = run(*args, *extra, cwd=project, LAMBDA_MCP_AUTH="jwt")
    one_line_error(result, args[0], "LAMBDA_MCP_AUTH=jwt", "LAMBDA_MCP_AUTH_ISSUER")


@pytest.mark.parametrize("through_lambda", [False, True])
def test_a_busy_port_is_one_line_and_no_serving_banner(project: Path, through_lambda: bool) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run("dev", "app.py", "--port", str(port), *(["--lambda"] if through_lambda else []), cwd=project)
    one_line_error(result, "dev", f"cannot listen on 127.0.0.1:{port}", "in use", "--port")
    assert "serving" not in result.stdout and "http://" not in result.stdout


def test_an_event_file_that_is_not_json_names_the_file_and_the_position(project: Path) -> None:
    (project / "broken.json").write_text('{"version": "2.0",\n  oops}')
    result = run("invoke", "broken.json", "--app", "app.py", cwd=project)
    one_line_error(result, "invoke", "broken.json is not JSON", "line 2 column 3")


def test_a_missing_event_file_and_an_event_of_no_known_shape_are_one_line(project: Path) -> None:
    one_line_error(
        run("invoke", "nope.json", "--app", "app.py", cwd=project), "invoke", "no such event file: nope.json"
    )
    (project / "odd.json").write_text('{"hello": "world"}')
    one_line_error(
        run("invoke", "odd.json", "--app", "app.py", cwd=project), "invoke", "odd.json", "SQS", "scheduled event"
    )
    one_line_error(
        run("invoke", "--tool", "add", "--arguments", "[1, 2]", "--app", "app.py", cwd=project),
        "invoke",
        "--arguments must be a JSON object",
    )
    one_line_error(run("invoke", "--app", "app.py", cwd=project), "invoke", "EVENT", "--tool")


def test_new_refuses_a_bad_name_and_an_existing_directory_in_one_line(project: Path) -> None:
    one_line_error(run("new", "../escape", cwd=project), "new", "not a usable project name")
    (project / "taken").mkdir()
    one_line_error(run("new", "taken", cwd=project), "new", "already exists")


def test_local_aws_and_call_failures_are_one_line(project: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    one_line_error(run("dev", "app.py", "--aws-endpoint", dead, cwd=project), "dev", dead, "did not answer")
    one_line_error(run("call", f"{dead}/mcp", "add", cwd=project, timeout=30), "call", dead)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        result = run("local-aws", "--in-memory", "--engine", "moto", "--port", port, cwd=project)
    one_line_error(result, "local-aws", "local AWS exited", "see ")


def test_debug_shows_the_traceback(project: Path) -> None:
    result = run("--debug", "dev", "app.py:typo", cwd=project)
    assert result.returncode != 0
    assert "Traceback" in result.stderr and "AppLoadError: app.py has no attribute 'typo'" in result.stderr


def test_dev_help_shows_the_defaults(project: Path) -> None:
    result = run("dev", "--help", cwd=project)
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "(default: 8000)" in text and "(default: 127.0.0.1)" in text and "(default: http)" in text


# -- servers ---------------------------------------------------------------------------------------------
class Dev:
    """`lambda-mcp dev` started the way a script does: pipes, and SIGINT ignored as `cmd &` leaves it."""

    def __init__(self, cwd: Path, target: str, *extra: str) -> None:
        self.port = free_port()
        self.stderr = cwd / f"dev-{self.port}.err"
        with self.stderr.open("w") as errors:
            self.process = subprocess.Popen(
                [LAMBDA_MCP, "dev", target, "--port", str(self.port), *extra],
                cwd=cwd,
                env=_env(),
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # noqa: PLW1509
            )
        assert self.process.stdout is not None
        self.banner = self.process.stdout.readline()

    def call(self, name: str, arguments: dict[str, object]) -> dict[str, object]:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": name,
                "arguments": arguments,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        }
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/mcp",
            data=json.dumps(body).encode(),
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "tools/call",
                "mcp-name": name,
            },
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            reply: dict[str, object] = json.loads(response.read())
        return reply

    def interrupt(self, timeout: float = 10) -> float:
        """Send SIGINT; how long it took to exit (fails the test if it does not within `timeout`)."""
        started = time.monotonic()
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=timeout)
        return time.monotonic() - started

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def dev(project: Path) -> Iterator[list[Dev]]:
    started: list[Dev] = []
    yield started
    for server in started:
        server.stop()


@pytest.mark.parametrize("through_lambda", [False, True])
def test_sigint_stops_dev_started_from_a_script(project: Path, dev: list[Dev], through_lambda: bool) -> None:
    server = Dev(project, "app.py", *(["--lambda"] if through_lambda else []))
    dev.append(server)
    assert f"127.0.0.1:{server.port}/mcp" in server.banner and "auth none" in server.banner
    assert server.call("add", {"a": 2, "b": 3})["result"]["content"][0]["text"] == "5"  # type: ignore[index]
    assert server.interrupt() < 8
    assert "Traceback" not in server.stderr.read_text()


def test_dev_serves_a_module_target_and_logs_one_line_per_request(project: Path, dev: list[Dev]) -> None:
    server = Dev(project, "pkg.server:app")
    dev.append(server)
    assert "serving demo" in server.banner and "streaming, auth none" in server.banner
    for a in (1, 2):
        assert server.call("add", {"a": a, "b": 1})["result"]["content"][0]["text"] == str(a + 1)  # type: ignore[index]
    server.interrupt()  # the log is complete once it has stopped
    lines = [line for line in server.stderr.read_text().splitlines() if "tools/call" in line]
    assert len(lines) == 2, server.stderr.read_text()
    method, path, status, mcp_method, tool, ms, unit = lines[0].split()
    assert (method, path, status, mcp_method, tool, unit) == ("POST", "/mcp", "200", "tools/call", "add", "ms")
    assert float(ms) >= 0


# -- invoke ----------------------------------------------------------------------------------------------
def _response(result: subprocess.CompletedProcess[str]) -> tuple[int, dict[str, object]]:
    assert result.returncode == 0, result.stderr
    response = json.loads(result.stdout)
    raw = response["body"]
    body = base64.b64decode(raw).decode() if response.get("isBase64Encoded") else raw
    return response["statusCode"], json.loads(body)


@pytest.mark.parametrize("api", ["http", "rest", "url"])
@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25", "2025-06-18"])
def test_invoke_tool_builds_the_event(project: Path, api: str, version: str) -> None:
    result = run(
        "invoke",
        "--tool",
        "add",
        "--arguments",
        '{"a": 20, "b": 22}',
        "--api",
        api,
        "--protocol-version",
        version,
        "--app",
        "pkg.server",
        cwd=project,
    )
    status, body = _response(result)
    assert status == 200
    assert body["result"]["content"][0]["text"] == "42"  # type: ignore[index]
    logged = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    call = [entry for entry in logged if entry.get("mcp_method") == "tools/call"]
    assert [(c["tool_name"], c["protocol_version"], c["status"]) for c in call] == [("add", version, 200)]


def test_invoke_tool_reports_an_unknown_tool_as_the_handler_does(project: Path) -> None:
    status, body = _response(run("invoke", "--tool", "subtract", "--app", "app.py", cwd=project))
    assert status == 200  # as the function returned it: the invocation ran; the JSON-RPC error is its answer
    assert body["error"] == {"code": -32602, "message": "Unknown tool: subtract"}


def test_invoke_event_files_keep_working() -> None:
    result = run(
        "invoke",
        str(EVENTS / "http-api-v2/modern_tools_call.json"),
        "--app",
        "examples/conformance/server.py",
        cwd=ROOT,
    )
    status, body = _response(result)
    assert status == 200 and body["result"]["content"]  # type: ignore[index]


def test_invoke_sends_worker_events_to_the_worker_handler(project: Path) -> None:
    swept = run("invoke", str(EVENTS / "schedule/sweep.json"), "--app", "app.py", cwd=project)
    assert swept.returncode == 0, swept.stderr
    assert set(json.loads(swept.stdout)) >= {"requeued", "failed", "expired"}
    assert any(json.loads(line).get("message") == "sweep" for line in swept.stderr.splitlines() if line.startswith("{"))
    task = run("invoke", str(EVENTS / "sqs-task/task-message.json"), "--app", "app.py", cwd=project)
    assert task.returncode == 0, task.stderr
    assert json.loads(task.stdout) == {"batchItemFailures": []}
    runs = [json.loads(line) for line in task.stderr.splitlines() if line.startswith('{"')]
    assert [(r["message"], r["task_id"]) for r in runs if r.get("message") == "task run"] == [
        ("task run", "REPLACE_WITH_TASK_ID")
    ]
    assert "unable to infer a handler" not in task.stderr


def test_invoke_logs_the_negotiated_version_on_initialize(project: Path) -> None:
    result = run(
        "invoke",
        "--tool",
        "add",
        "--arguments",
        '{"a": 1, "b": 2}',
        "--protocol-version",
        "2025-06-18",
        "--app",
        "app.py",
        cwd=project,
    )
    logged = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    assert [e["protocol_version"] for e in logged if e.get("mcp_method") == "initialize"] == ["2025-06-18"]
