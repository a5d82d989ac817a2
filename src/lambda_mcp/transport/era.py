"""Which protocol era a request speaks, and the version and client capabilities a 2026 request names (after
checking everything it must carry: one error names every problem)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.requests import Request

from ..protocol import revisions
from ..protocol.errors import INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION
from ..protocol.jsonrpc import Message
from ..protocol.names import META_CAPABILITIES, META_VERSION
from . import headers as mcp_headers
from .headers import Problem


def is_modern(request: Request, message: Message) -> bool:
    """The era rule: `_meta` versions are modern, sessions and legacy headers legacy (docs/decisions.md)."""
    if message.kind == "response":
        return False
    header = request.headers.get("mcp-protocol-version")
    meta = (message.params or {}).get("_meta")
    if message.method == "initialize":  # legacy unless it names a modern version (then: removed method)
        claimed = meta.get(META_VERSION) if isinstance(meta, dict) else header
        return isinstance(claimed, str) and claimed.strip() in revisions.MODERN_VERSIONS
    if isinstance(meta, dict) and META_VERSION in meta:
        return True
    if "mcp-session-id" in request.headers:
        return False
    return header is not None and header.strip() not in revisions.LEGACY_VERSIONS


def modern_request(
    request: Request, method: str, params: dict[str, Any], header_params: Mapping[str, str] | None
) -> tuple[str, dict[str, Any]]:
    """The version and client capabilities of a 2026 request, after checking its `MCP-Protocol-Version`
    header, `_meta` and routing headers (`headers.problems`): one `MCPError` (HTTP 400) naming every
    problem, with the code the first one has on its own (header -32020, `_meta` -32602, version -32022)."""
    header = request.headers.get("mcp-protocol-version")
    raw = params.get("_meta")
    meta: dict[str, Any] = raw if isinstance(raw, dict) else {}
    found = _meta_problems(header, meta)
    found += mcp_headers.problems(request.headers, method, params, header_params)
    if found:
        raise mcp_headers.refusal(found)
    return meta[META_VERSION], meta[META_CAPABILITIES]


def _meta_problems(header: str | None, meta: dict[str, Any]) -> list[Problem]:
    """What is wrong with the version header and `_meta` (empty when they are right and agree)."""
    version = meta.get(META_VERSION)
    capabilities = meta.get(META_CAPABILITIES)
    if (
        isinstance(version, str)
        and version in revisions.MODERN_VERSIONS
        and isinstance(capabilities, dict)
        and mcp_headers.matches(header, version)
    ):
        return []
    found: list[Problem] = []
    wanted = version if isinstance(version, str) and version in revisions.MODERN_VERSIONS else revisions.MODERN
    if header is None:
        found.append(mcp_headers.header_problem("MCP-Protocol-Version", None, wanted, ""))
    for key, value, send in ((META_VERSION, version, f'"{wanted}"'), (META_CAPABILITIES, capabilities, "{}")):
        if not isinstance(value, str if key == META_VERSION else dict):
            found.append(_meta_problem(key, value, send))
    if header is not None and isinstance(version, str) and not mcp_headers.matches(header, version):
        what = "params._meta protocolVersion"
        found.append(mcp_headers.header_problem("MCP-Protocol-Version", header, f"{wanted}, in both", what))
    if isinstance(version, str) and version not in revisions.MODERN_VERSIONS:
        data = {"supported": list(revisions.SUPPORTED), "requested": version}
        refused = mcp_headers.shown(version, "this one")
        item = f"params._meta.{META_VERSION}: {revisions.MODERN} ({refused} is not supported)"
        found.append(Problem("unsupported", item, "Unsupported protocol version", UNSUPPORTED_PROTOCOL_VERSION, data))
    return found


def _meta_problem(key: str, value: Any, send: str) -> Problem:
    kind = "missing" if value is None else "invalid"
    item = f"params._meta.{key}: {send}"
    alone = f"Invalid params: _meta must carry {key} ({kind}): send {send}"
    return Problem(kind, item, alone, INVALID_PARAMS)
