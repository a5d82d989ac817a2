"""An operation's arguments: its parameters and request body as one input schema (`type: object`), and the
`Plan` that sends the arguments back where each came from.

- Each parameter is an argument of its own name. When two share a name (`id` in the path and in the
  query), the one in the earlier location (path, query, header, cookie) keeps it and the other is
  `<location>_<name>` (`query_id`). Path parameters are always required. The `Accept`, `Content-Type` and
  `Authorization` header parameters are ignored, as OpenAPI says.
- A JSON or form body that is a plain object has its properties flattened into the arguments when none
  is also a parameter's argument (the body's required ones are required when the body is); any other
  body (an array, a composition, a collision) is the one argument `body`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .document import Document
from .media import is_form, is_json
from .naming import unique
from .operations import Operation
from .refs import Unsupported, resolved
from .schemas import Schemas, is_object

LOCATIONS = ("path", "query", "header", "cookie")
DEFAULT_STYLES = {"path": "simple", "query": "form", "header": "simple", "cookie": "form"}
IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
_TEMPLATE = re.compile(r"\{([^{}]+)\}")


@dataclass(frozen=True)
class Param:
    """One parameter: the `argument` that carries it, and how it is sent."""

    argument: str
    name: str
    location: str
    style: str
    explode: bool
    as_json: bool = False
    """Declared with `content` (a media type) rather than `schema`: sent as JSON text."""


@dataclass(frozen=True)
class Body:
    """The request body: the `argument` holding it whole, or (flattened) its `fields`."""

    media_type: str
    required: bool
    argument: str | None = None
    fields: tuple[str, ...] = ()
    extras: bool = False
    """Flattened, and the body takes other properties: arguments no parameter or field claims go in it."""


@dataclass(frozen=True)
class Plan:
    """Where each argument goes, and which must be given."""

    params: tuple[Param, ...]
    body: Body | None
    required: tuple[str, ...]


def input_side(document: Document, operation: Operation) -> tuple[dict[str, Any], Plan]:
    """The input schema and the plan; `Unsupported` when the operation cannot be called (a body type it
    cannot send, an external `$ref`, a path variable no parameter declares)."""
    schemas = Schemas(document.content, legacy=document.legacy, side="input")
    properties: dict[str, Any] = {}
    required: list[str] = []
    params: list[Param] = []
    for node in _parameters(document, operation):
        location = node["in"]
        name = node["name"]
        argument = name if name not in properties else unique(f"{location}_{name}", properties)
        properties[argument], as_json = _parameter_schema(node, schemas)
        if location == "path" or node.get("required") is True:
            required.append(argument)
        style = str(node.get("style") or DEFAULT_STYLES[location])
        explode = node["explode"] if isinstance(node.get("explode"), bool) else style == "form"
        params.append(Param(argument, name, location, style, explode, as_json))
    body = _body(document, operation, schemas, properties, required)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    definitions = schemas.definitions()
    if definitions:
        schema["$defs"] = definitions
    return schema, Plan(tuple(params), body, tuple(required))


def _parameters(document: Document, operation: Operation) -> list[Mapping[str, Any]]:
    """The operation's parameters (its path item's, overridden by its own of the same name and
    location), path first, then query, header and cookie."""
    merged: dict[tuple[str, str], Mapping[str, Any]] = {}
    own = operation.node.get("parameters")
    for raw in (*operation.shared_parameters, *(own if isinstance(own, list) else ())):
        node = resolved(document.content, raw)
        if not isinstance(node, Mapping) or not isinstance(node.get("name"), str) or node.get("in") not in LOCATIONS:
            raise Unsupported("it declares a parameter without a name or a location (in: path, query, header, cookie)")
        if node["in"] == "header" and node["name"].lower() in IGNORED_HEADERS:
            continue
        merged[(node["name"], node["in"])] = node
    declared = {name for name, location in merged if location == "path"}
    for variable in _TEMPLATE.findall(operation.path):
        if variable not in declared:
            raise Unsupported(f"its path names {{{variable}}}, which no path parameter declares")
    used = set(_TEMPLATE.findall(operation.path))
    kept = [n for (name, location), n in merged.items() if location != "path" or name in used]
    return sorted(kept, key=lambda n: LOCATIONS.index(n["in"]))


def _parameter_schema(node: Mapping[str, Any], schemas: Schemas) -> tuple[dict[str, Any], bool]:
    as_json = False
    if "schema" in node:
        converted = schemas.convert(node["schema"])
    elif isinstance(node.get("content"), Mapping) and node["content"]:
        media, described = next(iter(node["content"].items()))
        converted = schemas.convert(described.get("schema", {}) if isinstance(described, Mapping) else {})
        as_json = is_json(media)
    else:
        converted = {"type": "string"}
    schema: dict[str, Any] = dict(converted) if isinstance(converted, dict) else {} if converted else {"not": {}}
    if isinstance(node.get("description"), str) and "description" not in schema:
        schema["description"] = node["description"]
    if node.get("deprecated") is True:
        schema["deprecated"] = True
    return schema, as_json


def _body(
    document: Document, operation: Operation, schemas: Schemas, properties: dict[str, Any], required: list[str]
) -> Body | None:
    """The body's place in the arguments (added to `properties` and `required`)."""
    raw = operation.node.get("requestBody")
    if raw is None:
        return None
    node = resolved(document.content, raw)
    if not isinstance(node, Mapping):
        return None
    found = node.get("content")
    content: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    media = next((m for m in content if is_json(m)), None) or next((m for m in content if is_form(m)), None)
    if media is None and content:
        raise Unsupported(
            f"its request body is {', '.join(content)}; only JSON and application/x-www-form-urlencoded are sent"
        )
    described = content.get(media) if media is not None else None
    converted = schemas.convert(described.get("schema", {}) if isinstance(described, Mapping) else {})
    body_required = node.get("required") is True
    fields = converted.get("properties") if is_object(converted) else None
    if fields and not set(fields) & set(properties):
        properties.update(fields)
        if body_required and isinstance(converted.get("required"), list):
            required += [name for name in converted["required"] if name in fields]
        extras = converted.get("additionalProperties", True) is not False or "patternProperties" in converted
        return Body(media or "application/json", body_required, fields=tuple(fields), extras=extras)
    argument = unique("body", properties)
    schema = dict(converted) if isinstance(converted, dict) else {}
    if isinstance(node.get("description"), str) and "description" not in schema:
        schema["description"] = node["description"]
    properties[argument] = schema
    if body_required:
        required.append(argument)
    return Body(media or "application/json", body_required, argument=argument)
