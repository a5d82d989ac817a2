"""An operation's answers: the output schema its 2xx responses declare, and an HTTP response as the tool's
result.

- 2xx JSON: the JSON as text, and as `structuredContent` when there is an output schema (one JSON schema
  shared by every 2xx response; not an object: wrapped as `{"result": ...}`); `text/*` (and XML, YAML):
  the text; an image: image content; anything else: an embedded resource (`blob`, base64) whose URI is the
  request's URL without its query; no content (204): a short text.
- 3xx (redirects are not followed), 4xx and 5xx: a tool error with the status and at most
  `EXCERPT_CHARS` of the body.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..tools import error_result
from .document import Document
from .media import charset, essence, is_json, is_text
from .operations import Operation
from .outgoing import authority
from .refs import resolved
from .schemas import Schemas

EXCERPT_CHARS = 2000


@dataclass(frozen=True)
class Answer:
    """How the operation's answers are served."""

    schema: dict[str, Any] | None
    """The tool's `outputSchema`, None when its 2xx responses declare no one JSON schema."""
    wrapped: bool = False
    """The declared schema is not an object's: structured content is `{"result": <the JSON>}`."""
    accept: str | None = None
    """The `Accept` header its calls send: the declared 2xx media types, JSON first."""


@dataclass(frozen=True)
class Received:
    """An HTTP response, read (or its first part, for an error)."""

    status: int
    reason: str
    content_type: str
    body: bytes
    location: str | None = None


def output_side(document: Document, operation: Operation) -> Answer:
    """What the operation's 2xx responses declare; `Unsupported` for a `$ref` it cannot follow."""
    responses = operation.node.get("responses")
    success = [
        resolved(document.content, node)
        for code, node in (responses.items() if isinstance(responses, Mapping) else ())
        if str(code).startswith("2")
    ]
    declared: list[str] = []
    schemas: list[Any] = []
    for response in success:
        content = response.get("content") if isinstance(response, Mapping) else None
        content = content if isinstance(content, Mapping) else {}
        declared += [m for m in content if m not in declared]
        json_type = next((m for m in content if is_json(m)), None)
        described = content.get(json_type) if json_type is not None else None
        schemas.append(described.get("schema") if isinstance(described, Mapping) else None)
    accept = _accept(declared)
    if not schemas or any(s is None or s != schemas[0] for s in schemas):
        return Answer(None, accept=accept)
    converter = Schemas(document.content, legacy=document.legacy, side="output")
    schema = converter.convert(schemas[0])
    definitions = converter.definitions()
    wrapped = not (isinstance(schema, dict) and schema.get("type") == "object")
    if wrapped:
        schema = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    if definitions:
        schema = {**schema, "$defs": definitions}
    return Answer(schema, wrapped, accept)


def _accept(declared: list[str]) -> str | None:
    if not declared:
        return None
    ordered = sorted(declared, key=lambda m: not is_json(m))
    return ", ".join(ordered) if "*/*" in ordered else ", ".join([*ordered, "*/*;q=0.1"])


def result(answer: Answer, label: str, url: str, received: Received) -> dict[str, Any]:
    """The tool's result for `received`, the answer to the call `label` (`GET /pets/{petId}`) at `url`."""
    status = received.status
    if 300 <= status < 400:
        moved = f" (a redirect to {received.location})" if received.location else ""
        return error_result(f"{label} answered HTTP {status}{moved}; redirects are not followed")
    if status >= 400 or status < 200:
        return error_result(f"{label} answered HTTP {status} {received.reason}".rstrip() + _excerpt(received))
    if not received.body:
        if answer.schema is not None:
            return error_result(f"{label} answered HTTP {status} with no content, where its document declares JSON")
        return {"content": [{"type": "text", "text": f"{label}: HTTP {status}, no content"}]}
    kind = received.content_type
    if answer.schema is not None or is_json(kind):
        return _json(answer, label, received)
    if is_text(kind) or not kind:
        return {"content": [{"type": "text", "text": received.body.decode(charset(kind), errors="replace")}]}
    data = base64.b64encode(received.body).decode()
    if essence(kind).startswith("image/"):
        return {"content": [{"type": "image", "data": data, "mimeType": essence(kind)}]}
    uri = urlunsplit((urlsplit(url).scheme, authority(url), urlsplit(url).path, "", ""))
    return {"content": [{"type": "resource", "resource": {"uri": uri, "mimeType": essence(kind), "blob": data}}]}


def _json(answer: Answer, label: str, received: Received) -> dict[str, Any]:
    text = received.body.decode(charset(received.content_type), errors="replace")
    try:
        value = json.loads(text)
    except ValueError:
        if answer.schema is None:
            return {"content": [{"type": "text", "text": text}]}
        return error_result(
            f"{label} answered HTTP {received.status} with content that is not JSON" + _excerpt(received)
        )
    if answer.schema is None:
        return {"content": [{"type": "text", "text": text}]}
    if not answer.wrapped and not isinstance(value, dict):
        return error_result(f"{label} answered JSON that is not the object its document declares" + _excerpt(received))
    structured = {"result": value} if answer.wrapped else value
    return {
        "content": [{"type": "text", "text": json.dumps(structured, ensure_ascii=False)}],
        "structuredContent": structured,
    }


def _excerpt(received: Received) -> str:
    """`: <the body>`, at most `EXCERPT_CHARS` of it (a binary body: its size and type)."""
    if not received.body:
        return ""
    if received.content_type and not is_text(received.content_type):
        return f": ({len(received.body)} bytes of {essence(received.content_type)})"
    text = " ".join(received.body.decode(charset(received.content_type), errors="replace").split())
    return ": " + (text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…")
