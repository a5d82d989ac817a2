"""What the server tells clients about its authorization: RFC 9728 protected resource metadata and the
RFC 6750 `WWW-Authenticate` challenges that point to it.

Clients find the metadata through the challenge's `resource_metadata` on a 401, or at the well-known
URIs (`/.well-known/oauth-protected-resource/<mcp path>` first, then the root form).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

WELL_KNOWN = "/.well-known/oauth-protected-resource"
AUTHORIZATION_SERVER_METADATA = "/.well-known/oauth-authorization-server"
CHALLENGE_COPY = "Lambda-Mcp-Challenge"
"""The challenge again, under a name API Gateway leaves alone: it renames a function's `WWW-Authenticate`
(to `x-amzn-Remapped-WWW-Authenticate`), and template.yaml's HTTP API maps this copy back into place."""
_NEVER_ADVERTISED = frozenset({"offline_access"})
"""Scopes that are not the resource's to advertise (MCP 2026: not in challenges or `scopes_supported`)."""


def protected_resource_metadata(
    resource: str, issuer: str, scopes: Iterable[str], resource_name: str | None = None
) -> dict[str, Any]:
    document: dict[str, Any] = {
        "resource": resource,
        "authorization_servers": [issuer],
        "scopes_supported": sorted(set(scopes) - _NEVER_ADVERTISED),
        "bearer_methods_supported": ["header"],
    }
    if resource_name:
        document["resource_name"] = resource_name
    return document


MAX_DESCRIPTION_CHARS = 160
"""An `error_description` longer than this is cut: a challenge stays one short header line."""


def _quoted(value: str, limit: int = 2048) -> str:
    """An auth-param value as a quoted-string (RFC 9110 §5.6.4) of printable ASCII only (anything else
    becomes `?`, so a header never fails to encode), cut to `limit` characters."""
    cleaned = "".join(c if " " <= c < "\x7f" else "?" for c in value[:limit])
    return '"' + cleaned.replace("\\", "\\\\").replace('"', '\\"') + '"'


def challenge(
    metadata_url: str | None,
    *,
    error: str | None = None,
    description: str | None = None,
    scopes: Iterable[str] = (),
) -> str:
    """A `Bearer` challenge: `error` and `error_description` for a bad token or missing scope, the scopes the
    request needs, and where the protected resource metadata is."""
    params: list[str] = []
    if error:
        params.append(f"error={_quoted(error)}")
    wanted = sorted(set(scopes) - _NEVER_ADVERTISED)
    if wanted:
        params.append(f"scope={_quoted(' '.join(wanted))}")
    if metadata_url:
        params.append(f"resource_metadata={_quoted(metadata_url)}")
    if error and description:
        params.append(f"error_description={_quoted(description, MAX_DESCRIPTION_CHARS)}")
    return "Bearer " + ", ".join(params) if params else "Bearer"


DPOP_ALGORITHMS = "ES256 ES384 ES512 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA"


def dpop_challenge(
    metadata_url: str | None,
    *,
    error: str | None = None,
    description: str | None = None,
    scopes: Iterable[str] = (),
) -> str:
    """A `DPoP` challenge (RFC 9449 §7.1): as `challenge`, with the proof algorithms the server accepts."""
    bearer = challenge(metadata_url, error=error, description=description, scopes=scopes)
    params = [bearer.removeprefix("Bearer").strip(), f"algs={_quoted(DPOP_ALGORITHMS)}"]
    return "DPoP " + ", ".join(part for part in params if part)
