"""The CLI's in-process pieces: which handler an event goes to, the events `invoke --tool` builds, the
loader's messages, how an expected failure becomes one line, and `dev`'s request log line."""

from __future__ import annotations

import argparse
import base64
import errno
import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from lambda_mcp import cli
from lambda_mcp.loader import AppLoadError, load_app
from lambda_mcp.local.dev import cannot_listen, request_line
from lambda_mcp.local.events import handler_for, initialize, request_event, tool_call
from lambda_mcp.observe.invocation import Invocation
from lambda_mcp.protocol import revisions

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"


@pytest.mark.parametrize(
    ("path", "handler"),
    [
        ("http-api-v2/modern_tools_call.json", "http"),
        ("rest-api-v1/initialize.json", "http"),
        ("function-url/legacy_tools_call.json", "http"),
        ("http-api-v2-jwt/initialize.json", "http"),
        ("sqs-task/task-message.json", "worker"),
        ("sqs-task/dead-letter.json", "worker"),
        ("schedule/sweep.json", "worker"),
    ],
)
def test_each_event_of_the_repository_goes_to_its_handler(path: str, handler: str) -> None:
    assert handler_for(json.loads((EVENTS / path).read_text())) == handler


@pytest.mark.parametrize(
    "event",
    [
        {"hello": "world"},
        [],
        {"Records": [{"eventSource": "aws:s3"}]},
        {"Records": [{"eventSource": "aws:sqs"}, {"eventSource": "aws:sns"}]},
        {"requestContext": {}},
    ],
)
def test_an_event_of_no_known_shape_has_no_handler(event: Any) -> None:
    assert handler_for(event) is None


def _body(event: dict[str, Any]) -> dict[str, Any]:
    raw = event["body"]
    decoded: dict[str, Any] = json.loads(base64.b64decode(raw) if event["isBase64Encoded"] else raw)
    return decoded


@pytest.mark.parametrize("api", ["http", "rest", "url"])
def test_a_modern_tool_call_event_has_headers_matching_its_body(api: Any) -> None:
    event = request_event(api, tool_call("add", {"a": 1}, revisions.MODERN), revisions.MODERN)
    body = _body(event)
    headers = event["headers"]
    assert body["params"]["name"] == "add" and body["params"]["arguments"] == {"a": 1}
    assert body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == revisions.MODERN
    assert (headers["mcp-method"], headers["mcp-name"], headers["mcp-protocol-version"]) == (
        "tools/call",
        "add",
        revisions.MODERN,
    )
    assert handler_for(event) == "http"
    if api == "rest":
        assert event["httpMethod"] == "POST" and event["path"] == "/mcp" and event["requestContext"]["stage"] == "v1"
    else:
        assert event["version"] == "2.0" and event["rawPath"] == "/mcp"


def test_a_legacy_tool_call_carries_its_session_and_no_modern_items() -> None:
    version = revisions.NEWEST_LEGACY
    event = request_event("http", tool_call("add", {}, version), version, "session-1")
    assert event["headers"]["mcp-session-id"] == "session-1"
    assert event["headers"]["mcp-protocol-version"] == version
    assert "mcp-method" not in event["headers"] and "_meta" not in _body(event)["params"]
    opening = request_event("http", initialize(version), version)
    assert "mcp-protocol-version" not in opening["headers"]
    assert _body(opening)["params"]["protocolVersion"] == version


APP = "from lambda_mcp import MCPApp\napp = MCPApp('demo')\nother = MCPApp('other')\nnumber = 3\n"


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    path = tmp_path / "user_app.py"
    path.write_text(APP)
    return path


def test_the_loader_says_which_attribute_is_missing_or_wrong(user_file: Path) -> None:
    with pytest.raises(AppLoadError, match="has no attribute 'typo'"):
        load_app(f"{user_file}:typo")
    with pytest.raises(AppLoadError, match=r"number is not an MCPApp \(its type is int\)"):
        load_app(f"{user_file}:number")
    assert load_app(str(user_file)).name == "demo"  # two apps (one may mount the other): the one named `app`
    assert load_app(f"{user_file}:other").name == "other"
    user_file.write_text(APP.replace("app = MCPApp('demo')", "first = MCPApp('demo')"))
    with pytest.raises(AppLoadError, match="expected exactly one MCPApp \\(or one named app\\), found 2"):
        load_app(str(user_file))


def test_a_missing_module_target_is_an_app_load_error_but_a_missing_import_inside_it_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_user_mod.py").write_text("import no_such_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(AppLoadError, match="no module named 'nowhere_xyz'"):
        load_app("nowhere_xyz:app")
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_xyz"):  # the user's own import: traceback
        load_app("broken_user_mod:app")
    sys.modules.pop("broken_user_mod", None)


def test_expected_failures_are_recognised_by_type_and_others_are_not() -> None:
    from lambda_mcp.config import ConfigError
    from lambda_mcp.scaffold import ScaffoldError

    assert [cli.expected(e) for e in (AppLoadError("x"), ConfigError("x"), cli.UsageError("x"))] == [2, 2, 2]
    assert cli.expected(ConnectionRefusedError(errno.ECONNREFUSED, "refused")) == 2
    assert cli.expected(json.JSONDecodeError("Expecting value", "x", 0)) == 2
    assert cli.expected(ScaffoldError("x")) == 1
    assert cli.expected(KeyError("x")) is None and cli.expected(RuntimeError("x")) is None


def test_failures_explain_themselves_in_one_line() -> None:
    try:
        json.loads('{"a":\n}')
    except json.JSONDecodeError as exc:
        assert cli.explain(exc) == "not JSON: Expecting value at line 2 column 1"
    assert cli.explain(FileNotFoundError(errno.ENOENT, "No such file or directory", "x.json")) == (
        "No such file or directory: x.json"
    )
    busy = cannot_listen(OSError(errno.EADDRINUSE, "Address already in use"), "127.0.0.1", 8000)
    assert busy.errno == errno.EADDRINUSE
    assert (
        cli.explain(busy)
        == "cannot listen on 127.0.0.1:8000: Address already in use; stop what uses it or choose --port"
    )
    assert cli.explain(cli.UsageError("two\n  lines")) == "two lines"


def test_main_prints_one_line_and_exits_2_and_debug_raises(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))  # `dev` puts the current directory on it
    monkeypatch.setattr(signal, "signal", lambda signum, handler: None)  # and installs a SIGINT handler
    assert cli.main(["dev", "no_such_file.py"]) == 2
    assert capsys.readouterr().err == (
        "lambda-mcp dev: no such file: no_such_file.py (give path/to/file.py[:app] or module[:app])\n"
    )
    with pytest.raises(AppLoadError):
        cli.main(["--debug", "dev", "no_such_file.py"])


def test_help_shows_only_defaults_worth_showing() -> None:
    parser = argparse.ArgumentParser(formatter_class=cli._WithDefaults)
    parser.add_argument("--port", type=int, default=8000, help="port")
    parser.add_argument("--flag", action="store_true", help="a flag")
    parser.add_argument("--name", help="a name")
    text = " ".join(parser.format_help().split())
    assert "port (default: 8000)" in text
    assert "a flag (default" not in text and "a name (default" not in text


def test_the_request_line_names_method_path_status_mcp_method_tool_and_time() -> None:
    record = Invocation(None, fields={"mcp_method": "tools/call", "tool_name": "add"})
    method, path, status, mcp_method, tool, ms, unit = request_line("POST", "/mcp", 200, record).split()
    assert (method, path, status, mcp_method, tool, unit) == ("POST", "/mcp", "200", "tools/call", "add", "ms")
    assert int(ms) >= 0
    assert request_line("GET", "/healthz", 0, Invocation(None)).split()[:3] == ["GET", "/healthz", "-"]
