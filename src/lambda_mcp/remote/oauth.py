"""The HTTP side of `--login`: the authorization server found from a 401 (RFC 9728 protected resource
metadata, then RFC 8414 or OpenID metadata), the client registered (RFC 7591) or named by its metadata
document (CIMD), and the token endpoint's two grants with PKCE (RFC 7636) and `resource` (RFC 8707).

Every document is checked before it is used: the protected resource must be the URL the user typed, the
metadata's `issuer` the server it was fetched for, and PKCE S256 on offer.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from .failures import RemoteFailure, one_line
from .wire import param

CLIENT_NAME = "lambda-mcp command line"
PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"


@dataclass(frozen=True)
class AuthorizationServer:
    """What discovery found for one MCP server."""

    resource: str
    """The protected resource's identifier (its metadata's `resource`): the tokens' audience."""
    scope: str | None
    """What to ask for: the challenge's `scope`, else the resource's `scopes_supported`."""
    metadata: dict[str, Any]

    @property
    def issuer(self) -> str:
        return str(self.metadata["issuer"])

    def endpoint(self, name: str) -> str:
        return str(self.metadata.get(name) or "")


@dataclass(frozen=True)
class Client:
    client_id: str
    client_secret: str | None = None
    auth_method: str = "none"


def pkce() -> tuple[str, str]:
    """A PKCE verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _document(http: httpx.Client, url: str) -> dict[str, Any] | None:
    """The JSON object at `url`; None for anything else (not there, not JSON)."""
    try:
        response = http.get(url, headers={"accept": "application/json"})
    except httpx.HTTPError as exc:
        raise RemoteFailure(f"--login cannot reach {url}: {one_line(str(exc)) or type(exc).__name__}") from None
    if response.status_code != 200:
        return None
    try:
        document = response.json()
    except ValueError:
        return None
    return document if isinstance(document, dict) else None


def _same(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def discover(http: httpx.Client, url: str, challenge: str) -> AuthorizationServer:
    """The authorization server for the MCP server at `url`, which answered 401 with `challenge`."""
    parts = urlsplit(url)
    origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    pointed = param(challenge, "resource_metadata")
    candidates = [pointed] if pointed else [origin + PRM_WELL_KNOWN + path, origin + PRM_WELL_KNOWN]
    found = next((doc for doc in (_document(http, c) for c in candidates) if doc is not None), None)
    if found is None:
        raise RemoteFailure(f"--login found no OAuth protected resource metadata for {url} (at {candidates[0]})")
    resource = str(found.get("resource") or "")
    if not (_same(resource, url) or url.startswith(resource.rstrip("/") + "/")):
        raise RemoteFailure(f"--login: the server's metadata is for {resource!r}, not {url}: not signing in")
    servers = found.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise RemoteFailure(f"--login: {url}'s protected resource metadata names no authorization server")
    scope = param(challenge, "scope") or " ".join(str(s) for s in found.get("scopes_supported") or []) or None
    return AuthorizationServer(resource, scope, _metadata(http, servers[0]))


def _metadata(http: httpx.Client, issuer: str) -> dict[str, Any]:
    """RFC 8414 metadata, else OpenID's, at the well-known URIs an issuer with a path has (the MCP order)."""
    parts = urlsplit(issuer)
    origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    candidates = [f"{origin}/.well-known/oauth-authorization-server{path}"]
    candidates += [f"{origin}/.well-known/openid-configuration{path}"]
    if path:
        candidates.append(f"{origin}{path}/.well-known/openid-configuration")
    for candidate in candidates:
        document = _document(http, candidate)
        if document is None:
            continue
        if not _same(str(document.get("issuer") or ""), issuer):
            raise RemoteFailure(f"--login: the metadata at {candidate} names issuer {document.get('issuer')!r}")
        if not document.get("authorization_endpoint") or not document.get("token_endpoint"):
            raise RemoteFailure(f"--login: {issuer} has no authorization or token endpoint in its metadata")
        if "S256" not in (document.get("code_challenge_methods_supported") or []):
            raise RemoteFailure(f"--login: {issuer} does not offer PKCE S256, which a sign-in needs")
        return document
    raise RemoteFailure(f"--login found no authorization server metadata for {issuer}")


def register(http: httpx.Client, server: AuthorizationServer, redirect_uri: str) -> Client:
    """A new public client for `redirect_uri` (Dynamic Client Registration)."""
    endpoint = server.endpoint("registration_endpoint")
    if not endpoint:
        raise RemoteFailure(
            f"--login: {server.issuer} offers no client registration; pass --client-metadata URL"
            " (a client ID metadata document listing a http://127.0.0.1 redirect URI)"
        )
    request = {
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    answer = _post(http, endpoint, "the client registration", json=request)
    if not isinstance(answer.get("client_id"), str):
        raise RemoteFailure(f"--login: {endpoint} registered no client_id")
    secret = answer.get("client_secret")
    method = str(answer.get("token_endpoint_auth_method") or ("client_secret_basic" if secret else "none"))
    return Client(answer["client_id"], secret if isinstance(secret, str) else None, method)


def document_redirect(http: httpx.Client, server: AuthorizationServer, document_url: str) -> str:
    """The loopback redirect URI of the client ID metadata document at `document_url` (CIMD)."""
    if server.metadata.get("client_id_metadata_document_supported") is not True:
        raise RemoteFailure(f"--login: {server.issuer} does not take client ID metadata documents")
    document = _document(http, document_url)
    if document is None or document.get("client_id") != document_url:
        raise RemoteFailure(f"--client-metadata: {document_url} is not a client ID metadata document naming itself")
    for uri in document.get("redirect_uris") or []:
        if isinstance(uri, str) and urlsplit(uri).scheme == "http" and urlsplit(uri).hostname == "127.0.0.1":
            return uri
    raise RemoteFailure(f"--client-metadata: {document_url} lists no http://127.0.0.1 redirect URI")


def token_request(http: httpx.Client, endpoint: str, client: Client, form: dict[str, str]) -> dict[str, Any]:
    """A token endpoint's answer to `form`, the client authenticated as it registered."""
    headers: dict[str, str] = {}
    form = {**form, "client_id": client.client_id}
    if client.client_secret and client.auth_method == "client_secret_basic":
        pair = f"{client.client_id}:{client.client_secret}".encode()
        headers["authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        form.pop("client_id")
    elif client.client_secret:
        form["client_secret"] = client.client_secret
    what = "the code" if form.get("grant_type") == "authorization_code" else "the refresh token"
    answer = _post(http, endpoint, what, data=form, headers=headers)
    if not isinstance(answer.get("access_token"), str) or str(answer.get("token_type", "")).lower() != "bearer":
        raise RemoteFailure(f"--login: {endpoint} answered without a bearer access token")
    return answer


class Refused(RemoteFailure):
    """The authorization server answered 4xx (`error` says why: invalid_grant, ...)."""

    def __init__(self, message: str, error: str) -> None:
        super().__init__(message)
        self.error = error


def _post(http: httpx.Client, url: str, what: str, **request: Any) -> dict[str, Any]:
    try:
        response = http.post(url, **request)
    except httpx.HTTPError as exc:
        raise RemoteFailure(f"--login cannot reach {url}: {one_line(str(exc)) or type(exc).__name__}") from None
    try:
        answer = response.json()
    except ValueError:
        answer = None
    answer = answer if isinstance(answer, dict) else {}
    if response.status_code >= 400:
        error = str(answer.get("error") or f"HTTP {response.status_code}")
        description = one_line(str(answer.get("error_description") or ""), 200)
        message = f"--login: the authorization server refused {what}: {error}"
        message += f" ({description})" if description else ""
        if response.status_code < 500:
            raise Refused(message, error)
        raise RemoteFailure(message)
    return answer
