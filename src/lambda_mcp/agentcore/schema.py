"""Reduce tools' JSON Schemas to what AgentCore Gateway's Lambda-target API model accepts, and export an
app's tools as the target's tool-schema document (`lambda-mcp export agentcore APP`).

The gateway's `ToolDefinition` is `name`, `description`, `inputSchema` and (optional) `outputSchema`; its
`SchemaDefinition` has only `type` (one of `string number integer boolean object array`), `properties`,
`required`, `items` and `description` (the bedrock-agentcore-control API model). So a reduced schema has
`$ref`s inlined (their `$defs` dropped), an `anyOf`/`oneOf` with `null` collapsed to its other member, a
`type` list to its non-null type, `allOf` merged, and a missing type inferred. What it cannot carry is
not silently lost: enums, consts, defaults, formats, bounds and patterns are written into the property's
description ("one of: a, b"), and any other keyword the reduction drops is named there too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..server.app import MCPApp

ALLOWED_KEYS = frozenset({"type", "properties", "required", "items", "description"})
"""The keys of the gateway's `SchemaDefinition`."""
TYPES = ("string", "number", "integer", "boolean", "object", "array")
"""The gateway's `SchemaType` values."""
_FOLDED = (
    ("format", "format: {}"),
    ("default", "default: {}"),
    ("pattern", "pattern: {}"),
    ("minimum", "at least {}"),
    ("exclusiveMinimum", "more than {}"),
    ("maximum", "at most {}"),
    ("exclusiveMaximum", "less than {}"),
    ("multipleOf", "a multiple of {}"),
    ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"),
    ("minItems", "at least {} items"),
    ("maxItems", "at most {} items"),
)
"""Keywords the gateway cannot carry, written into the description, in this order, after `enum`/`const`."""
_QUIET = frozenset(
    {"$schema", "$id", "$defs", "definitions", "$anchor", "$dynamicAnchor", "$comment", "title", "examples"}
    | {"additionalProperties", "anyOf", "oneOf", "allOf", "$ref", "enum", "const", "nullable", "uniqueItems"}
    | {key for key, _ in _FOLDED}
)
"""Keywords dropped without a note: structure the reduction resolves, or annotations of no consequence."""


_SHAPES = frozenset({"type", "properties", "items", "enum", "const"})
"""Keywords that give a union member a shape (a member without them only constrains)."""


class SchemaError(ValueError):
    """A schema the reduction cannot follow (a `$ref` outside the document)."""


def reduce_schema(schema: dict[str, Any], *, root: dict[str, Any] | None = None) -> dict[str, Any]:
    """`schema` as a gateway `SchemaDefinition` (`root`: the document its `$ref`s point into)."""
    return _reduce(schema, schema if root is None else root, ())


def _reduce(node: Any, root: dict[str, Any], seen: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(node, dict):  # `true` / `false` schemas: anything
        return {"type": "string", "description": "any JSON value"}
    node, seen = _resolved(node, root, seen)
    node = _merged_all_of(node, root, seen)
    notes: list[str] = []
    node = _collapsed_union(node, root, seen, notes)
    kind = _type_of(node, notes)
    out: dict[str, Any] = {"type": kind}
    if kind == "object":
        properties = node.get("properties")
        if isinstance(properties, dict) and properties:
            out["properties"] = {str(k): _reduce(v, root, seen) for k, v in properties.items()}
        required = [r for r in node.get("required") or [] if isinstance(r, str) and r in out.get("properties", {})]
        if required:
            out["required"] = required
    elif kind == "array":
        items = node.get("items")
        out["items"] = _reduce(items, root, seen) if isinstance(items, dict) and items else _any()
    description = _described(node, notes)
    if description:
        out["description"] = description
    return out


def _any() -> dict[str, Any]:
    return {"type": "string", "description": "any JSON value"}


def _resolved(
    node: dict[str, Any], root: dict[str, Any], seen: tuple[str, ...]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The node with its `$ref` inlined (the node's own keywords win), and the refs followed so far."""
    while isinstance(node.get("$ref"), str):
        ref: str = node["$ref"]
        if ref in seen:  # a recursive type: stop at the second visit
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {"type": "object", **rest, "description": _join(rest.get("description"), f"recursive: {ref}")}, seen
        target = _pointer(root, ref)
        seen = (*seen, ref)
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node, seen


def _pointer(root: dict[str, Any], ref: str) -> dict[str, Any]:
    if not ref.startswith("#"):
        raise SchemaError(f"$ref {ref!r} points outside the schema")
    found: Any = root
    for part in [p for p in ref[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(found, dict) or part not in found:
            raise SchemaError(f"$ref {ref!r} names nothing in the schema")
        found = found[part]
    if not isinstance(found, dict):
        raise SchemaError(f"$ref {ref!r} is not a schema")
    return found


def _merged_all_of(node: dict[str, Any], root: dict[str, Any], seen: tuple[str, ...]) -> dict[str, Any]:
    """An `allOf`'s members merged into the node: properties and required names joined."""
    members = node.get("allOf")
    if not isinstance(members, list):
        return node
    merged = {k: v for k, v in node.items() if k != "allOf"}
    for member in members:
        if not isinstance(member, dict):
            continue
        member, _ = _resolved(member, root, seen)
        for key, value in member.items():
            if key == "properties" and isinstance(value, dict):
                merged["properties"] = {**value, **(merged.get("properties") or {})}
            elif key == "required" and isinstance(value, list):
                merged["required"] = [*(merged.get("required") or []), *value]
            else:
                merged.setdefault(key, value)
    return merged


def _collapsed_union(
    node: dict[str, Any], root: dict[str, Any], seen: tuple[str, ...], notes: list[str]
) -> dict[str, Any]:
    """An `anyOf`/`oneOf` reduced to one member: the non-null one (the others are named in a note)."""
    for key in ("anyOf", "oneOf"):
        members = node.get(key)
        if not isinstance(members, list):
            continue
        rest = {k: v for k, v in node.items() if k != key}
        options = [_resolved(m, root, seen)[0] for m in members if isinstance(m, dict)]
        options = [m for m in options if m.get("type") != "null"]
        if not options:
            return rest
        if not any(_SHAPES & m.keys() for m in options):  # alternatives of constraints only (`required`)
            notes.append(f"further constraints not shown: {key}")
            return rest
        if len(options) > 1:
            if all("const" in m for m in options):  # an enum written as titled consts
                return {
                    **rest,
                    "enum": [m["const"] for m in options],
                    "type": rest.get("type") or options[0].get("type"),
                }
            others = ", ".join(str(m.get("type") or m.get("title") or "another form") for m in options[1:])
            notes.append(f"also accepts: {others}")
        first = options[0]
        return {**first, **rest, "description": rest.get("description") or first.get("description")}
    return node


def _type_of(node: dict[str, Any], notes: list[str]) -> str:
    """The node's one gateway type: its declared non-null type, else inferred from its keywords."""
    declared = node.get("type")
    kinds = [declared] if isinstance(declared, str) else [t for t in declared or [] if isinstance(t, str)]
    kinds = [t for t in kinds if t != "null"]
    if kinds:
        if len(kinds) > 1:
            notes.append(f"also accepts: {', '.join(kinds[1:])}")
        return kinds[0] if kinds[0] in TYPES else "string"
    if "properties" in node or "additionalProperties" in node:
        return "object"
    if "items" in node:
        return "array"
    values = node.get("enum") if isinstance(node.get("enum"), list) else [node["const"]] if "const" in node else []
    if values:
        sample = values[0]
        if isinstance(sample, bool):
            return "boolean"
        if isinstance(sample, int):
            return "integer"
        if isinstance(sample, float):
            return "number"
        return "string"
    notes.append("any JSON value")
    return "string"


def _described(node: dict[str, Any], notes: list[str]) -> str:
    """The node's description (else its title) with what the gateway cannot carry written after it."""
    parts: list[str] = []
    if isinstance(node.get("enum"), list):
        parts.append("one of: " + ", ".join(_text(v) for v in node["enum"]))
    if "const" in node:
        parts.append(f"must be: {_text(node['const'])}")
    parts.extend(
        template.format(json.dumps(node[key]) if key == "default" else _text(node[key]))
        for key, template in _FOLDED
        if key in node
    )
    hidden = "further constraints not shown: "
    parts.extend(n for n in notes if not n.startswith(hidden))
    dropped = sorted(
        {k for k in node if k not in ALLOWED_KEYS and k not in _QUIET and not k.startswith("x-")}
        | {n.removeprefix(hidden) for n in notes if n.startswith(hidden)}
    )
    if dropped:
        parts.append(hidden + ", ".join(dropped))
    base = node.get("description") if isinstance(node.get("description"), str) else None
    if not base and isinstance(node.get("title"), str):
        base = node["title"]
    return _join(base, "; ".join(parts))


def _join(base: Any, extra: str) -> str:
    text = base if isinstance(base, str) else ""
    if not extra:
        return text
    return f"{text} ({extra})" if text else extra


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def tool_document(tool: dict[str, Any]) -> dict[str, Any]:
    """One tool's gateway `ToolDefinition` from its MCP definition."""
    description = tool.get("description") or tool.get("title") or tool["name"]
    input_schema = reduce_schema(tool.get("inputSchema") or {"type": "object"})
    input_schema["type"] = "object"  # the gateway's rule for the top level
    document: dict[str, Any] = {"name": tool["name"], "description": description, "inputSchema": input_schema}
    output = tool.get("outputSchema")
    if isinstance(output, dict):
        document["outputSchema"] = reduce_schema(output)
    return document


def export(app: MCPApp, target: str | None = None) -> list[dict[str, Any]]:
    """The app's tools as the Lambda target's inline tool-schema document (`toolSchema.inlinePayload`).

    Names are the app's own: the gateway prefixes them with `<target>___`. `target`, when given, must be a
    valid gateway target name (ValueError otherwise); `lambda-mcp check --agentcore` reports the names
    that do not fit it."""
    if target is not None:
        from .constraints import target_problem

        problem = target_problem(target)
        if problem:
            raise ValueError(problem)
    return [tool_document(tool.definition) for tool in app.tools.values()]


def main(argv: list[str]) -> int:
    """`lambda-mcp export agentcore APP [--target NAME] [-o FILE]`: the document as JSON."""
    from ..loader import AppLoadError, load_app
    from .constraints import agentcore_problems

    parser = argparse.ArgumentParser(
        prog="lambda-mcp export agentcore",
        description="Write the app's tools as an AgentCore Gateway Lambda target's tool schema (inlinePayload):"
        " name, description, inputSchema and outputSchema, reduced to what the gateway accepts.",
    )
    parser.add_argument("app", help="the app, as path/to/file.py[:app] or module[:app]")
    parser.add_argument("--target", help="the gateway target's name (its names are checked against it)")
    parser.add_argument("-o", "--output", type=Path, help="write the JSON here (default: standard output)")
    args = parser.parse_args(argv)
    try:
        app = load_app(args.app)
        document = export(app, args.target)
    except (AppLoadError, ValueError) as exc:
        print(f"lambda-mcp export agentcore: {exc}", file=sys.stderr)
        return 2
    for problem in agentcore_problems(app, args.target):
        print(f"lambda-mcp export agentcore: warning: {problem}", file=sys.stderr)
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text)
    return 0
