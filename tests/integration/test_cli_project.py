"""In a project made by `lambda-mcp new` (issue 34): `lambda-mcp dev` and `lambda-mcp invoke` need no
target, `dev --reload` serves the edited app without a restart (streaming and `--lambda`), and
`dev --lambda` prints the readable request line `dev` prints (the handler's JSON line with `--json-logs`).
The console script as a user runs it, in the project's directory."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.test_cli import LAMBDA_MCP, _env, one_line_error, run
from tests.support.polling import wait_until
from tests.support.processes import ServerProcess, free_port

MODERN = "2026-07-28"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("made")
    done = subprocess.run([LAMBDA_MCP, "new", "demo"], cwd=parent, env=_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return parent / "demo"


@pytest.fixture
def demo(made: Path, tmp_path: Path) -> Path:
    """A copy of the project for one test (a test may edit its app)."""
    return Path(shutil.copytree(made, tmp_path / "demo"))


@pytest.fixture
def servers() -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    yield started
    for server in started:
        server.stop()


def dev(project: Path, servers: list[ServerProcess], *args: str) -> ServerProcess:
    """`lambda-mcp dev ARGS` in `project` (no target), its output in `project/dev.log`."""
    port = free_port()
    command = [LAMBDA_MCP, "dev", *args, "--port", str(port)]
    server = ServerProcess(command, port, _env(), log=project / "dev.log", cwd=project)
    servers.append(server)
    return server


def greet(server: ServerProcess, name: str = "Ada") -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "greet",
            "arguments": {"name": name},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": MODERN}
    headers |= {"mcp-method": "tools/call", "mcp-name": "greet"}
    reply = httpx.post(server.url, json=body, headers=headers, timeout=30).json()
    return str(reply["result"]["content"][0]["text"])


# -- the project's app by default ---------------------------------------------------------------------------
@pytest.mark.parametrize("through_lambda", [False, True])
def test_dev_serves_the_projects_app_without_a_target(
    demo: Path, servers: list[ServerProcess], through_lambda: bool
) -> None:
    server = dev(demo, servers, *(["--lambda"] if through_lambda else []))
    assert greet(server) == "Hello, Ada!"


def test_invoke_runs_the_projects_app_without_app(demo: Path) -> None:
    built = run("invoke", "--tool", "greet", "--arguments", '{"name": "Ada"}', cwd=demo)
    assert built.returncode == 0, built.stderr
    assert "Hello, Ada!" in json.loads(built.stdout)["body"]
    from_file = run("invoke", "events/greet.json", cwd=demo)
    assert from_file.returncode == 0, from_file.stderr
    assert json.loads(from_file.stdout)["statusCode"] == 200


def test_outside_a_project_the_missing_target_is_one_line(tmp_path: Path) -> None:
    one_line_error(run("dev", "--port", str(free_port()), cwd=tmp_path), "dev", "TARGET", "app/app.py")
    one_line_error(run("invoke", "--tool", "greet", cwd=tmp_path), "invoke", "--app", "app/app.py")


# -- --reload ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("through_lambda", [False, True])
def test_reload_serves_the_edited_app(demo: Path, servers: list[ServerProcess], through_lambda: bool) -> None:
    server = dev(demo, servers, "--reload", *(["--lambda"] if through_lambda else []))
    assert greet(server) == "Hello, Ada!"  # the first child serves; the reloader watches app/
    app = demo / "app/app.py"
    edited = app.read_text().replace('f"Hello, {name}!"', 'f"Howdy, {name}!"')
    written = [0.0]

    def reloaded() -> bool:
        if time.monotonic() - written[0] > 3:  # (again, should the watcher have started after the first write)
            app.write_text(edited)
            written[0] = time.monotonic()
        return greet(server) == "Howdy, Ada!"

    wait_until(reloaded, timeout=30, what="the reloaded app's answer")
    assert server.process.poll() is None  # the same `lambda-mcp dev`, on the same port
    assert "Reloading" in server.log_text()


def test_reload_reports_a_mistake_in_the_app_in_one_line_at_start(demo: Path) -> None:
    result = run("dev", "app/app.py:nope", "--reload", "--port", str(free_port()), cwd=demo)
    one_line_error(result, "dev", "has no attribute 'nope'")


# -- dev --lambda's request lines ------------------------------------------------------------------------------
def test_dev_lambda_prints_the_readable_request_line(demo: Path, servers: list[ServerProcess]) -> None:
    server = dev(demo, servers, "--lambda")
    greet(server)

    def line() -> list[str]:
        return [x for x in server.log_text().splitlines() if x.startswith("POST /mcp 200")]

    (found,) = wait_until(line, what="the request line")
    method, path, status, mcp_method, tool, ms, unit = found.split()
    assert (method, path, status, mcp_method, tool, unit) == ("POST", "/mcp", "200", "tools/call", "greet", "ms")
    assert float(ms) >= 0
    assert '"message":"request"' not in server.log_text()  # the JSON line only with --json-logs


def test_dev_lambda_json_logs_prints_the_handlers_json_line_instead(demo: Path, servers: list[ServerProcess]) -> None:
    server = dev(demo, servers, "--lambda", "--json-logs")
    greet(server)

    def logged() -> list[dict[str, object]]:
        lines = [json.loads(x) for x in server.log_text().splitlines() if x.startswith('{"level"')]
        return [x for x in lines if x.get("message") == "request"]

    (request,) = wait_until(logged, what="the JSON request line")
    assert (request["mcp_method"], request["tool_name"], request["status"]) == ("tools/call", "greet", 200)
    assert not [x for x in server.log_text().splitlines() if x.startswith("POST /mcp")]
