"""Give each protocol revision exactly the fields its schema defines.

Definitions are registered once in their richest form; these functions trim them (and result
content) for the revision a request speaks: no `icons` before 2025-11-25, no `title`, `_meta`,
`outputSchema`, `structuredContent` or `resource_link` in 2025-03-26, no `execution` in 2026.
"""

from __future__ import annotations

import json
from typing import Any

from .revisions import OLDEST_FIRST, has_structured_output

_R0325, _R0618, _R1125, _R0728 = OLDEST_FIRST


def _ladder(
    base: set[str], june: set[str], november: set[str], modern_drop: frozenset[str] = frozenset()
) -> dict[str, frozenset[str]]:
    r0618 = base | june
    r1125 = r0618 | november
    return {
        _R0325: frozenset(base),
        _R0618: frozenset(r0618),
        _R1125: frozenset(r1125),
        _R0728: frozenset(r1125 - modern_drop),
    }


_FIELDS: dict[str, dict[str, frozenset[str]]] = {
    "tool": _ladder(
        {"name", "description", "inputSchema", "annotations"},
        {"title", "outputSchema", "_meta"},
        {"icons", "execution"},
        frozenset({"execution"}),
    ),
    "resource": _ladder(
        {"uri", "name", "description", "mimeType", "annotations", "size"}, {"title", "_meta"}, {"icons"}
    ),
    "template": _ladder(
        {"uriTemplate", "name", "description", "mimeType", "annotations"}, {"title", "_meta"}, {"icons"}
    ),
    "prompt": _ladder({"name", "description", "arguments"}, {"title", "_meta"}, {"icons"}),
    "argument": _ladder({"name", "description", "required"}, {"title"}, set()),
    "implementation": _ladder({"name", "version"}, {"title"}, {"description", "icons", "websiteUrl"}),
    "annotations": _ladder({"audience", "priority"}, {"lastModified"}, set()),
    "block": _ladder({"type", "text", "data", "mimeType", "resource", "annotations"}, {"_meta"}, set()),
    "link": _ladder(
        set(), {"type", "uri", "name", "title", "description", "mimeType", "size", "annotations", "_meta"}, {"icons"}
    ),
    "contents": _ladder({"uri", "mimeType", "text", "blob"}, {"_meta"}, set()),
}


def _pick(kind: str, value: dict[str, Any], version: str) -> dict[str, Any]:
    keys = _FIELDS[kind].get(version, _FIELDS[kind][_R0728])
    return {k: v for k, v in value.items() if k in keys}


def implementation(info: dict[str, Any], version: str) -> dict[str, Any]:
    return _pick("implementation", info, version)


def tool(definition: dict[str, Any], version: str) -> dict[str, Any]:
    shaped = _pick("tool", definition, version)
    if "annotations" in shaped and not has_structured_output(version):
        shaped["annotations"] = {k: v for k, v in shaped["annotations"].items() if k != "_meta"}
    return shaped


def resource(definition: dict[str, Any], version: str) -> dict[str, Any]:
    return _annotated(_pick("resource", definition, version), version)


def template(definition: dict[str, Any], version: str) -> dict[str, Any]:
    return _annotated(_pick("template", definition, version), version)


def prompt(definition: dict[str, Any], version: str) -> dict[str, Any]:
    shaped = _pick("prompt", definition, version)
    if "arguments" in shaped:
        shaped["arguments"] = [_pick("argument", arg, version) for arg in shaped["arguments"]]
    return shaped


def contents(items: list[dict[str, Any]], version: str) -> list[dict[str, Any]]:
    return [_pick("contents", item, version) for item in items]


def content(blocks: list[dict[str, Any]], version: str) -> list[dict[str, Any]]:
    """Trim content blocks; a `resource_link` becomes a text block for 2025-03-26, which lacks it."""
    return [_block(block, version) for block in blocks]


def _block(block: dict[str, Any], version: str) -> dict[str, Any]:
    if block.get("type") == "resource_link":
        if not has_structured_output(version):
            return {"type": "text", "text": block.get("uri", "")}
        return _annotated(_pick("link", block, version), version)
    shaped = _annotated(_pick("block", block, version), version)
    if isinstance(shaped.get("resource"), dict):
        shaped["resource"] = _pick("contents", shaped["resource"], version)
    return shaped


def _annotated(value: dict[str, Any], version: str) -> dict[str, Any]:
    if isinstance(value.get("annotations"), dict):
        value["annotations"] = _pick("annotations", value["annotations"], version)
    return value


def tool_result(result: dict[str, Any], version: str) -> dict[str, Any]:
    """Trim a `CallToolResult`; 2025-03-26 gets structured output as text only."""
    shaped = dict(result)
    shaped["content"] = content(result.get("content", []), version)
    if not has_structured_output(version) and "structuredContent" in shaped:
        structured = shaped.pop("structuredContent")
        if not shaped["content"]:
            shaped["content"] = [{"type": "text", "text": json.dumps(structured)}]
    return shaped


def prompt_result(result: dict[str, Any], version: str) -> dict[str, Any]:
    shaped = dict(result)
    shaped["messages"] = [{**m, "content": _block(m["content"], version)} for m in result.get("messages", [])]
    return shaped
