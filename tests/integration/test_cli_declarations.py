"""A declaration mistake in the user's app, as `lambda-mcp dev` and `invoke` (subprocesses) report it: one
line naming the user's file and line, the tool, the parameter and what to write (`--debug`: the traceback);
and `ctx: Context | None = None` is served."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_cli import one_line_error, run
from tests.support.processes import free_port

HEADER = "from lambda_mcp import Context, MCPApp\n\napp = MCPApp('mistakes')\n\n\nclass Widget:\n    pass\n"
"""Seven lines: a declaration below starts on line 8."""

MISTAKES = {
    "type": (
        "@app.tool\ndef paint(\n    count: int,\n    widget: Widget,\n) -> str:\n    return ''\n",
        "app.py:11: tool 'paint': parameter 'widget' has type Widget, which has no JSON Schema; use int, float,",
    ),
    "star args": (
        "@app.tool()\ndef tag(first: str, *names: str) -> str:\n    return ''\n",
        "app.py:9: tool 'tag': parameter *names is not supported: arguments arrive by name",
    ),
    "misused decorator": (
        "@app.tool(42)\ndef tag() -> str:\n    return ''\n",
        "app.py:8: @app.tool takes the tool's name or nothing, not int 42: write @app.tool, @app.tool() or",
    ),
    "same name twice": (
        "@app.tool\ndef search() -> str:\n    return ''\n\n\n@app.tool(name='search')\ndef find() -> str:\n"
        "    return ''\n",
        "app.py:14: tool 'search' is declared twice (first at app.py:9): give one of them another name",
    ),
    "prompt type": (
        "@app.prompt\ndef brief(words: int) -> str:\n    return ''\n",
        "app.py:9: prompt 'brief': parameter 'words' has type int, but prompt arguments arrive as strings",
    ),
}


@pytest.mark.parametrize("mistake", MISTAKES, ids=list(MISTAKES))
@pytest.mark.parametrize("command", ["dev", "dev --lambda", "invoke"])
def test_a_declaration_mistake_is_one_line_naming_the_users_file_and_line(
    tmp_path: Path, mistake: str, command: str
) -> None:
    declaration, expected = MISTAKES[mistake]
    (tmp_path / "app.py").write_text(HEADER + declaration)
    if command == "invoke":
        args = ["invoke", "--tool", "paint", "--app", "app.py"]
    else:
        args = [*command.split(), "app.py", "--port", str(free_port())]
    result = run(*args, cwd=tmp_path)
    line = one_line_error(result, "dev" if command != "invoke" else "invoke", expected)
    assert result.returncode == 2 and "lambda_mcp" not in line


def test_a_module_target_names_the_file_under_the_current_directory(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "server.py").write_text(HEADER + MISTAKES["star args"][0])
    result = run("dev", "pkg.server", "--port", str(free_port()), cwd=tmp_path)
    one_line_error(result, "dev", "pkg/server.py:9: tool 'tag': parameter *names is not supported")


def test_debug_shows_the_traceback_down_to_the_declaration(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(HEADER + MISTAKES["type"][0])
    result = run("--debug", "dev", "app.py", "--port", str(free_port()), cwd=tmp_path)
    assert result.returncode != 0 and "Traceback" in result.stderr
    assert "DeclarationError: app.py:11: tool 'paint'" in result.stderr and 'app.py", line 8' in result.stderr


def test_an_optional_context_is_served(tmp_path: Path) -> None:
    tool = (
        "@app.tool\nasync def where(city: str, ctx: Context | None = None) -> str:\n"
        "    return f'{city} {ctx.protocol_version if ctx else None}'\n"
    )
    (tmp_path / "app.py").write_text(HEADER + tool)
    result = run("invoke", "--tool", "where", "--arguments", '{"city": "Porto"}', "--app", "app.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    body = json.loads(json.loads(result.stdout)["body"])
    assert body["result"]["content"][0]["text"] == "Porto 2026-07-28"
