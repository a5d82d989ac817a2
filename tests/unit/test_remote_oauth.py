"""`--login`'s discovery refuses what it must not trust (`lambda_mcp.remote.oauth`), against documents
served by an in-process transport: metadata for another resource, an issuer that names another one, no
PKCE S256; and it finds an issuer with a path (a REST API's stage) where OpenID looks below it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from lambda_mcp.remote.failures import RemoteFailure
from lambda_mcp.remote.oauth import discover, pkce

MCP = "https://api.example.com/v1/mcp"
CHALLENGE = 'Bearer resource_metadata="https://api.example.com/v1/.well-known/oauth-protected-resource/v1/mcp"'


def _metadata(issuer: str, **changes: Any) -> dict[str, Any]:
    return {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/oauth/authorize",
        "token_endpoint": f"{issuer}/oauth/token",
        "registration_endpoint": f"{issuer}/oauth/register",
        "code_challenge_methods_supported": ["S256"],
        **changes,
    }


def _http(documents: dict[str, Any]) -> httpx.Client:
    """A client whose GETs are answered from `documents` (404 for every other URL); it records them."""
    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        found = documents.get(str(request.url))
        return httpx.Response(200, json=found) if found is not None else httpx.Response(403, json={})

    client = httpx.Client(transport=httpx.MockTransport(answer))
    client.asked = asked  # type: ignore[attr-defined]
    return client


def _prm(resource: str = MCP, issuer: str = "https://api.example.com/v1") -> dict[str, Any]:
    return {"resource": resource, "authorization_servers": [issuer], "scopes_supported": ["mcp:tools"]}


PRM_URL = "https://api.example.com/v1/.well-known/oauth-protected-resource/v1/mcp"
OPENID_BELOW = "https://api.example.com/v1/.well-known/openid-configuration"


def test_an_issuer_with_a_path_is_found_where_openid_looks_below_it() -> None:
    issuer = "https://api.example.com/v1"
    http = _http({PRM_URL: _prm(), OPENID_BELOW: _metadata(issuer)})
    found = discover(http, MCP, CHALLENGE)
    assert (found.resource, found.issuer, found.scope) == (MCP, issuer, "mcp:tools")
    assert http.asked == [  # type: ignore[attr-defined]
        PRM_URL,
        "https://api.example.com/.well-known/oauth-authorization-server/v1",
        "https://api.example.com/.well-known/openid-configuration/v1",
        OPENID_BELOW,
    ]


def test_the_challenges_scope_is_asked_for_before_the_resources_list() -> None:
    http = _http({PRM_URL: _prm(), OPENID_BELOW: _metadata("https://api.example.com/v1")})
    assert discover(http, MCP, CHALLENGE + ', scope="files:read"').scope == "files:read"


@pytest.mark.parametrize(
    ("documents", "said"),
    [
        ({PRM_URL: _prm(resource="https://evil.example.com/mcp")}, "metadata is for 'https://evil.example.com/mcp'"),
        ({PRM_URL: {**_prm(), "authorization_servers": []}}, "names no authorization server"),
        (
            {PRM_URL: _prm(), OPENID_BELOW: _metadata("https://evil.example.com")},
            "names issuer 'https://evil.example.com'",
        ),
        (
            {
                PRM_URL: _prm(),
                OPENID_BELOW: _metadata("https://api.example.com/v1", code_challenge_methods_supported=[]),
            },
            "does not offer PKCE S256",
        ),
        ({PRM_URL: _prm()}, "found no authorization server metadata for https://api.example.com/v1"),
        ({}, "found no OAuth protected resource metadata"),
    ],
)
def test_discovery_refuses_what_it_cannot_trust(documents: dict[str, Any], said: str) -> None:
    with pytest.raises(RemoteFailure) as refused:
        discover(_http(documents), MCP, CHALLENGE)
    assert said in str(refused.value)


def test_pkce_pairs_are_s256_and_new_each_time() -> None:
    import base64
    import hashlib

    verifier, challenge = pkce()
    assert 43 <= len(verifier) <= 128
    assert challenge == base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert pkce()[0] != verifier
