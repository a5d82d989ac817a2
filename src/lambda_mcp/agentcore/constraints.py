"""AgentCore Gateway's documented constraints on an app's tools, for `lambda-mcp check --agentcore`.

- A gateway tool name is at most 256 characters (the gateway quotas).
- An agent sees `<target>___<tool>`; Bedrock's Converse API takes tool names of 1-64 characters of
  `[a-zA-Z0-9_-]`, so the prefixed name must fit that (a gateway lists a longer name unchanged, and a
  Bedrock-backed agent then fails on it).
- A target name matches `([0-9a-zA-Z][-]?){1,100}` (the bedrock-agentcore-control API model).
- A tool needs a description (`ToolDefinition.description` is required).
- An MCP-server target's `tools/list` may not use `$ref`, `$defs`, `$anchor`, `$dynamicRef` or
  `$dynamicAnchor`: the target's creation or synchronization fails (gateway-target-MCPservers).
  (`lambda-mcp export agentcore` inlines them for a Lambda target.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..server.app import MCPApp

MAX_TOOL_NAME = 256
MAX_MODEL_NAME = 64
MODEL_NAME = re.compile(r"[a-zA-Z0-9_-]+")
TARGET_NAME = re.compile(r"([0-9a-zA-Z]-?){1,100}")
DELIMITER = "___"
REFUSED_KEYWORDS = ("$ref", "$defs", "$anchor", "$dynamicRef", "$dynamicAnchor")
RENAME = "name it to fit with @app.tool(name=...)"


def target_problem(target: str) -> str | None:
    """Why `target` is no valid gateway target name, if it is not."""
    if TARGET_NAME.fullmatch(target):
        return None
    return (
        f"target name {target!r} is not a valid AgentCore Gateway target name: 1-100 letters or digits,"
        " each optionally followed by one hyphen (no underscores, no leading hyphen)"
    )


def agentcore_problems(app: MCPApp, target: str | None) -> list[str]:
    """Each way the app's tools break the gateway's documented constraints, one message each. Without
    `target` the model-facing length is checked for the shortest target name (one character)."""
    problems: list[str] = []
    if target is not None:
        problem = target_problem(target)
        if problem:
            problems.append(problem)
    prefix = f"{target if target is not None else 'x'}{DELIMITER}"
    for tool in app.tools.values():
        name = tool.name
        if len(name) > MAX_TOOL_NAME:
            problems.append(
                f"tool {name[:40]!r}...: {len(name)} characters, over the gateway's {MAX_TOOL_NAME}: {RENAME}"
            )
        exposed = prefix + name
        if len(exposed) > MAX_MODEL_NAME:
            whose = f"{exposed!r}" if target is not None else f"with the shortest target name, {exposed!r}"
            problems.append(
                f"tool {name!r}: an agent sees it as {whose}, {len(exposed)} characters, over the {MAX_MODEL_NAME}"
                f" Bedrock models take: {RENAME}" + ("" if target is None else " or choose a shorter target name")
            )
        if not MODEL_NAME.fullmatch(name):
            bad = "".join(sorted({c for c in name if not MODEL_NAME.fullmatch(c)}))
            problems.append(
                f"tool {name!r}: the characters {bad!r} are not allowed in a Bedrock model's tool name"
                f" ([a-zA-Z0-9_-] only): {RENAME}"
            )
        description = tool.definition.get("description")
        if not isinstance(description, str) or not description.strip():
            problems.append(
                f"tool {name!r} has no description, which the gateway requires: give the function a docstring"
                " or @app.tool(description=...)"
            )
        for where, schema in (
            ("input", tool.definition.get("inputSchema")),
            ("output", tool.definition.get("outputSchema")),
        ):
            found = sorted(set(_keywords(schema)))
            if found:
                problems.append(
                    f"tool {name!r}: its {where} schema uses {', '.join(found)}, which an MCP-server target's"
                    " tools/list may not (the gateway fails to create or sync the target): use self-contained"
                    " schemas (for a Lambda target, `lambda-mcp export agentcore` inlines them)"
                )
    return problems


def _keywords(node: Any) -> Iterator[str]:
    """The refused keywords anywhere in a schema (property names are names, not keywords)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in REFUSED_KEYWORDS:
                yield key
            if key in ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas") and isinstance(
                value, dict
            ):
                for sub in value.values():
                    yield from _keywords(sub)
            elif key not in ("enum", "const", "default", "examples"):
                yield from _keywords(value)
    elif isinstance(node, list):
        for item in node:
            yield from _keywords(item)


def check_main(app_target: str | None, target: str | None) -> int:
    """`lambda-mcp check --agentcore [--agentcore-target NAME] APP`: one line per problem; exit 1 if any,
    2 if the app cannot be loaded, else 0."""
    import sys

    from ..loader import AppLoadError, load_app

    if not app_target:
        print("lambda-mcp check: --agentcore needs the app (path/to/file.py[:app] or module[:app])", file=sys.stderr)
        return 2
    try:
        app = load_app(app_target)
    except AppLoadError as exc:
        print(f"lambda-mcp check: {exc}", file=sys.stderr)
        return 2
    found = agentcore_problems(app, target)
    for problem in found:
        print(f"lambda-mcp check: {problem}", file=sys.stderr)
    if found:
        return 1
    print(f"lambda-mcp check: {len(app.tools)} tools: nothing AgentCore Gateway would refuse")
    return 0
