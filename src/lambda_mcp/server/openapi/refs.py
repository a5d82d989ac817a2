"""Following a document's `$ref`s: local JSON pointers (`#/components/schemas/Pet`) are resolved; any other
(another file, a URL, an anchor) is `Unsupported`, the reason its operation is skipped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

MAX_HOPS = 32
"""A `$ref` to a `$ref` to ...: more hops than this is a loop."""


class Unsupported(Exception):
    """What keeps one operation from being a tool (an external `$ref`, a body it cannot send, ...): its
    message is the reason in the report."""


def pointer(document: Mapping[str, Any], ref: str) -> Any:
    """What the local `ref` points to in `document`."""
    if not ref.startswith("#"):
        raise Unsupported(f"it uses the external $ref {ref!r}: bundle the document into one file first")
    fragment = unquote(ref[1:])
    if fragment and not fragment.startswith("/"):
        raise Unsupported(f"it uses the $ref {ref!r}, which is not a JSON pointer")
    node: Any = document
    for token in fragment.split("/")[1:] if fragment else ():
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise Unsupported(f"its $ref {ref!r} points to nothing in the document")
    return node


def resolved(document: Mapping[str, Any], node: Any) -> Any:
    """`node`, or what its `$ref` points to (through chains of `$ref`s): a parameter, a request body, a
    response, a path item. Schemas are resolved by `schemas.Schemas`, which keeps recursion."""
    for _ in range(MAX_HOPS):
        if not (isinstance(node, Mapping) and isinstance(node.get("$ref"), str)):
            return node
        node = pointer(document, node["$ref"])
    raise Unsupported("its $refs loop")
