"""MCP Apps (`io.modelcontextprotocol/ui`): a tool's link to its HTML UI, the UI resource's `_meta.ui`,
and whether the app uses the extension (then the server declares it in its capabilities).

A tool names its UI in `_meta.ui.resourceUri` (and the flat `_meta["ui/resourceUri"]` that hosts of
the extension's first release read); the UI is a `ui://` resource of type `text/html;profile=mcp-app`
whose content items carry the host settings (`csp`, `permissions`, `domain`, `prefersBorder`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

EXTENSION = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
_VISIBILITY = ("model", "app")
_PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")
_CSP = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")


def _require_ui_uri(uri: str) -> None:
    if not uri.startswith("ui://"):
        raise ValueError(f"an MCP App's UI lives at a ui:// URI, not {uri!r}")


def tool_meta(uri: str, visibility: Sequence[str] | None) -> dict[str, Any]:
    _require_ui_uri(uri)
    ui: dict[str, Any] = {"resourceUri": uri}
    if visibility is not None:
        unknown = [v for v in visibility if v not in _VISIBILITY]
        if unknown or not visibility:
            raise ValueError(f"ui_visibility holds 'model' and/or 'app', not {list(visibility)!r}")
        ui["visibility"] = list(visibility)
    return {"ui": ui, "ui/resourceUri": uri}


def resource_meta(
    uri: str,
    csp: dict[str, list[str]] | None,
    permissions: Iterable[str],
    domain: str | None,
    prefers_border: bool | None,
) -> dict[str, Any] | None:
    _require_ui_uri(uri)
    ui: dict[str, Any] = {}
    if csp:
        unknown = sorted(set(csp) - set(_CSP))
        if unknown:
            raise ValueError(f"unknown csp keys {unknown}; expected some of {list(_CSP)}")
        ui["csp"] = {key: list(value) for key, value in csp.items()}
    granted = list(permissions)
    if granted:
        unknown = sorted(set(granted) - set(_PERMISSIONS))
        if unknown:
            raise ValueError(f"unknown permissions {unknown}; expected some of {list(_PERMISSIONS)}")
        ui["permissions"] = {name: {} for name in granted}
    if domain is not None:
        ui["domain"] = domain
    if prefers_border is not None:
        ui["prefersBorder"] = prefers_border
    return {"ui": ui} if ui else None


def uses_apps(tools: Iterable[Any], resources: Iterable[Any]) -> bool:
    return any("ui" in (t.definition.get("_meta") or {}) for t in tools) or any(
        r.mime_type == MIME_TYPE for r in resources
    )
