"""`lambda-mcp export agentcore` and `lambda-mcp check --agentcore`: the conformance example's tools as a
Lambda target's tool-schema document, and the gateway's documented constraints on names and schemas."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lambda_mcp import MCPApp
from lambda_mcp.agentcore import agentcore_problems, export, reduce_schema
from lambda_mcp.agentcore.schema import ALLOWED_KEYS, TYPES, main
from lambda_mcp.check import main as check_main
from lambda_mcp.loader import load_app
from tests.support.processes import ROOT

APP = str(ROOT / "examples/conformance/server.py")


def walk(schema: dict[str, Any], where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    yield where or "/", schema
    for name, sub in (schema.get("properties") or {}).items():
        yield from walk(sub, f"{where}/{name}")
    if "items" in schema:
        yield from walk(schema["items"], f"{where}/[]")


def test_every_exported_schema_uses_only_the_gateways_keys_and_types() -> None:
    document = export(load_app(APP))
    assert {tool["name"] for tool in document} == set(load_app(APP).tools)
    for tool in document:
        assert set(tool) <= {"name", "description", "inputSchema", "outputSchema"}
        assert tool["description"]
        assert tool["inputSchema"]["type"] == "object"
        for key in ("inputSchema", "outputSchema"):
            for where, node in walk(tool.get(key) or {"type": "object"}):
                assert set(node) <= ALLOWED_KEYS, f"{tool['name']} {key}{where}: {set(node) - ALLOWED_KEYS}"
                assert node["type"] in TYPES, f"{tool['name']} {key}{where}"
                assert all(r in node.get("properties", {}) for r in node.get("required", []))


def test_refs_are_inlined_and_what_the_gateway_cannot_carry_is_in_the_descriptions() -> None:
    [tool] = [t for t in export(load_app(APP)) if t["name"] == "json_schema_2020_12_tool"]
    schema = tool["inputSchema"]
    assert "$ref" not in json.dumps(schema) and "$defs" not in json.dumps(schema)
    assert schema["properties"]["address"] == {
        "type": "object",
        "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
    }
    assert schema["properties"]["contactMethod"] == {"type": "string", "description": "one of: phone, email"}
    assert "required" not in schema  # "phone or email" is a constraint-only anyOf: not made a requirement
    assert schema["description"] == "further constraints not shown: anyOf, else, if, then"


def test_nullable_unions_collapse_and_enums_defaults_formats_fold_into_the_description() -> None:
    schema = {
        "type": "object",
        "$defs": {"Size": {"type": "string", "enum": ["s", "m"], "description": "A size"}},
        "properties": {
            "size": {"anyOf": [{"$ref": "#/$defs/Size"}, {"type": "null"}], "default": None},
            "when": {"type": ["string", "null"], "format": "date-time"},
            "count": {"type": "integer", "minimum": 1, "default": 5},
            "tags": {"type": "array", "items": {}},
            "free": {},
        },
        "required": ["count", "ghost"],
        "additionalProperties": False,
    }
    reduced = reduce_schema(schema)
    assert reduced == {
        "type": "object",
        "properties": {
            "size": {"type": "string", "description": "A size (one of: s, m; default: null)"},
            "when": {"type": "string", "description": "format: date-time"},
            "count": {"type": "integer", "description": "default: 5; at least 1"},
            "tags": {"type": "array", "items": {"type": "string", "description": "any JSON value"}},
            "free": {"type": "string", "description": "any JSON value"},
        },
        "required": ["count"],
    }


def test_a_recursive_ref_stops_instead_of_looping() -> None:
    schema = {
        "type": "object",
        "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}},
        "properties": {"root": {"$ref": "#/$defs/Node"}},
    }
    reduced = reduce_schema(schema)
    child = reduced["properties"]["root"]["properties"]["child"]
    assert child["type"] == "object" and "recursive" in child["description"]


def test_the_command_writes_the_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tools.json"
    assert main([APP, "--target", "conformance", "-o", str(out)]) == 0
    written = json.loads(out.read_text())
    assert [t["name"] for t in written] == list(load_app(APP).tools)
    assert "warning: tool 'json_schema_2020_12_tool'" in capsys.readouterr().err
    assert main([APP, "--target", "bad_name"]) == 2
    assert "not a valid AgentCore Gateway target name" in capsys.readouterr().err


def long_named_app() -> MCPApp:
    app = MCPApp("names")

    @app.tool(name="lookup.orders")
    def dotted() -> str:
        """Dotted."""
        return ""

    @app.tool(name="x" * 60)
    def long() -> str:
        """Long."""
        return ""

    @app.tool(name="fine")
    def undocumented() -> str:
        return ""

    return app


def test_check_reports_each_name_length_character_and_description_problem() -> None:
    problems = agentcore_problems(long_named_app(), "orders")
    assert any("'lookup.orders'" in p and "'.'" in p and "@app.tool(name=...)" in p for p in problems)
    assert any("orders___" + "x" * 60 in p and "69 characters" in p for p in problems)
    assert any("'fine' has no description" in p for p in problems)
    assert len(problems) == 3
    assert not any("x" * 60 in p for p in agentcore_problems(long_named_app(), "a"))  # 1 + 3 + 60 = 64: fits
    assert any("65 characters" in p for p in agentcore_problems(long_named_app(), "ab"))
    assert any("not a valid AgentCore Gateway target name" in p for p in agentcore_problems(MCPApp("x"), "a_b"))
    assert agentcore_problems(MCPApp("x"), "ok-target-1") == []


def test_check_flags_reference_keywords_an_mcp_server_target_refuses() -> None:
    problems = agentcore_problems(load_app(APP), None)
    assert problems == [
        "tool 'json_schema_2020_12_tool': its input schema uses $anchor, $defs, $ref, which an MCP-server"
        " target's tools/list may not (the gateway fails to create or sync the target): use self-contained"
        " schemas (for a Lambda target, `lambda-mcp export agentcore` inlines them)"
    ]


def test_check_agentcore_through_the_check_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check_main(["--agentcore", APP]) == 1
    assert "json_schema_2020_12_tool" in capsys.readouterr().err
    clean = tmp_path / "clean.py"
    clean.write_text(
        'from lambda_mcp import MCPApp\napp = MCPApp("c")\n\n\n@app.tool()\n'
        'def hi() -> str:\n    """Hi."""\n    return "hi"\n'
    )
    assert check_main(["--agentcore", "--agentcore-target", "tools", str(clean)]) == 0
    assert "nothing AgentCore Gateway would refuse" in capsys.readouterr().out
    assert check_main(["--agentcore", "--agentcore-target=-bad", str(clean)]) == 1
    with pytest.raises(SystemExit):
        check_main([str(clean)])  # an app without --agentcore


def test_the_cli_exports_the_document_and_refuses_an_unknown_format() -> None:
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "lambda_mcp.cli", "export", "agentcore", "examples/conformance/server.py"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    tools = json.loads(done.stdout)
    assert "test_simple_text" in {tool["name"] for tool in tools}
    assert all(set(tool) <= {"name", "description", "inputSchema", "outputSchema"} for tool in tools)
    other = subprocess.run(
        [sys.executable, "-m", "lambda_mcp.cli", "export", "openapi"], capture_output=True, text=True
    )
    assert other.returncode == 2 and "lambda-mcp export agentcore APP" in other.stderr
