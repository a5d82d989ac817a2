"""`openapi_tools`: an OpenAPI document's operations as tools, made once at declaration (each definition a
plain dict the tool keeps, so listing costs nothing per request), and the `Report` of what was made, what
was skipped and why, and the base URL the calls go to."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...protocol.names import is_tool_name
from ..outbound.auth import OutboundAuth
from ..tools import Tool, forwarding_tool
from .calls import Call
from .document import Document, SpecError, load, server_url
from .inputs import input_side
from .naming import made_name, valid_name
from .operations import Filters, Operation, operations, security_scopes
from .outputs import output_side
from .refs import Unsupported

TASK_SUPPORT = ("forbidden", "optional", "required")


@dataclass(frozen=True)
class Skipped:
    """An operation that is not a tool: `operation` (`GET /pets/{petId}`) and why; `filtered` when the
    filters (tags, paths, methods) left it out rather than something in it."""

    operation: str
    reason: str
    filtered: bool = False


@dataclass
class Report:
    """What `app.openapi` made of a document."""

    tools: list[Tool]
    skipped: list[Skipped]
    base_url: str
    operations: dict[str, str] = field(default_factory=dict)
    """Each tool's operation (`GET /pets/{petId}`), by tool name."""


def openapi_tools(
    spec: str | Path | Mapping[str, Any],
    *,
    base_url: str | None = None,
    auth: OutboundAuth | None = None,
    tags: Iterable[str] = (),
    exclude_tags: Iterable[str] = (),
    paths: Iterable[str] = (),
    exclude_paths: Iterable[str] = (),
    methods: Iterable[str] = (),
    names: Mapping[str, str] | None = None,
    scopes: Mapping[str, Iterable[str]] | None = None,
    task_support: str | Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> Report:
    """One tool per operation of `spec` the filters keep (see `MCPApp.openapi`); `SpecError` (a
    `DeclarationError`) for a document it cannot serve or an option that does not fit it."""
    document = load(spec, timeout)
    filters = Filters(tuple(tags), tuple(exclude_tags), tuple(paths), tuple(exclude_paths), tuple(methods))
    filters = filters.checked(document.source)
    renamed = _checked_names(document, dict(names or {}))
    scoped = {name: tuple(granted) for name, granted in (scopes or {}).items()}
    supports = _checked_task_support(document, task_support)
    fixed = _checked_headers(document, headers or {})
    report = Report([], [], server_url(document, base_url))
    keys: set[str] = set()
    every_name: set[str] = set()
    for found in operations(document):
        if isinstance(found, tuple):
            report.skipped.append(Skipped(found[0], found[1]))
            continue
        key = found.operation_id or made_name(found.method, found.path)
        keys |= {key, valid_name(key)}
        name = renamed.get(key) or renamed.get(valid_name(key)) or valid_name(key)
        every_name.add(name)
        left_out = filters.left_out(found)
        if left_out is not None:
            report.skipped.append(Skipped(found.label, left_out, filtered=True))
            continue
        if name in report.operations:
            taken = f"its tool name {name!r} is already {report.operations[name]}'s: give one another with names="
            report.skipped.append(Skipped(found.label, taken))
            continue
        support = supports.get(name, supports.get("")) if supports else None
        try:
            granted = scoped[name] if name in scoped else security_scopes(document, found)
            tool = _tool(document, found, name, report.base_url, auth, fixed, timeout, granted, support)
        except Unsupported as exc:
            report.skipped.append(Skipped(found.label, str(exc)))
            continue
        report.tools.append(tool)
        report.operations[name] = found.label
    _refuse_unknown(document, "names", set(renamed) - keys, "operationId (or made name)")
    _refuse_unknown(document, "scopes", set(scoped) - every_name, "tool name")
    _refuse_unknown(document, "task_support", set(supports) - every_name - {""}, "tool name")
    return report


def _tool(
    document: Document,
    operation: Operation,
    name: str,
    base_url: str,
    auth: OutboundAuth | None,
    headers: dict[str, str],
    timeout: float,
    scopes: tuple[str, ...],
    support: str | None,
) -> Tool:
    input_schema, plan = input_side(document, operation)
    answer = output_side(document, operation)
    definition: dict[str, Any] = {"name": name, "description": _description(operation), "inputSchema": input_schema}
    if answer.schema is not None:
        definition["outputSchema"] = answer.schema
    definition["annotations"] = _annotations(operation.method)
    if support is not None:
        definition["execution"] = {"taskSupport": support}
    call = Call(operation.method, operation.path, base_url, plan, answer, auth, headers, timeout)
    return forwarding_tool(call, definition, scopes=scopes, structured=answer.schema is not None)


def _description(operation: Operation) -> str:
    """Its summary and description (else its method and path); a deprecated one says so."""
    parts: list[str] = []
    for key in ("summary", "description"):
        text = operation.node.get(key)
        if isinstance(text, str) and text.strip() and text.strip() not in parts:
            parts.append(text.strip())
    if operation.node.get("deprecated") is True:
        parts.append("Deprecated.")
    return "\n\n".join(parts) or operation.label


def _annotations(method: str) -> dict[str, Any]:
    """Hints from HTTP's method semantics: GET, HEAD and OPTIONS only read; PUT and DELETE are idempotent
    (whether a change destroys anything the method does not say: left at MCP's default)."""
    hints: dict[str, Any] = {"readOnlyHint": method in ("GET", "HEAD", "OPTIONS"), "openWorldHint": True}
    if method in ("PUT", "DELETE"):
        hints["idempotentHint"] = True
    return hints


def _checked_names(document: Document, names: dict[str, str]) -> dict[str, str]:
    bad = [name for name in names.values() if not is_tool_name(name)]
    if bad:
        problem = f"names: {bad[0]!r} is not a valid tool name (1-128 of A-Z a-z 0-9 _ . -)"
        raise SpecError(document.source, problem)
    return names


def _checked_headers(document: Document, headers: Mapping[str, str]) -> dict[str, str]:
    for name, value in headers.items():
        text = f"{name}{value}"
        if not isinstance(value, str) or not text.isascii() or any(c in text for c in "\r\n\0"):
            raise SpecError(document.source, f"headers: {name!r} must be a string: one line of ASCII text")
    return dict(headers)


def _checked_task_support(document: Document, task_support: str | Mapping[str, str] | None) -> dict[str, str]:
    """Per tool name (`""`: every tool) the task support asked for."""
    given = {"": task_support} if isinstance(task_support, str) else dict(task_support or {})
    for value in given.values():
        if value not in TASK_SUPPORT:
            raise SpecError(document.source, f"task_support={value!r}: one of {', '.join(TASK_SUPPORT)}")
    return given


def _refuse_unknown(document: Document, option: str, unknown: set[str], kind: str) -> None:
    if unknown:
        first = sorted(unknown)[0]
        raise SpecError(document.source, f"{option}: {first!r} is no {kind} of the document")
