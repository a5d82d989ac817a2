"""Which protocol era a request speaks, and the version and client capabilities a 2026 request names."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ..protocol import revisions
from ..protocol.errors import INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION, MCPError
from ..protocol.jsonrpc import Message
from ..protocol.names import META_CAPABILITIES, META_VERSION
from . import headers as mcp_headers


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


def modern_meta(request: Request, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The version and client capabilities of a 2026 request; `MCPError` (HTTP 400) when they are missing,
    disagree with the `MCP-Protocol-Version` header, or name an unsupported version."""
    header_version = request.headers.get("mcp-protocol-version")
    meta = params.get("_meta")
    if header_version is None:
        raise mcp_headers.mismatch("Missing MCP-Protocol-Version header")
    if (
        not isinstance(meta, dict)
        or not isinstance(meta.get(META_VERSION), str)
        or not isinstance(meta.get(META_CAPABILITIES), dict)
    ):
        raise MCPError(
            INVALID_PARAMS,
            "Invalid params: _meta must carry io.modelcontextprotocol/protocolVersion and clientCapabilities",
            http_status=400,
        )
    version: str = meta[META_VERSION]
    if mcp_headers.decode(header_version) != version:
        raise mcp_headers.mismatch("MCP-Protocol-Version header does not match _meta protocolVersion")
    if version not in revisions.MODERN_VERSIONS:
        raise MCPError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": list(revisions.SUPPORTED), "requested": version},
            http_status=400,
        )
    capabilities: dict[str, Any] = meta[META_CAPABILITIES]
    return version, capabilities
