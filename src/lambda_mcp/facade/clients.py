"""The facade's clients: Dynamic Client Registration (RFC 7591), Client ID Metadata Documents, and
redirect URI matching.

- **DCR.** A registration is at most `MAX_METADATA_BYTES` of JSON with at most `MAX_REDIRECT_URIS`
  redirect URIs; at most `registrations_per_window` registrations are accepted per `WINDOW_SECONDS`
  (the rest get 429). A registered client lives `CLIENT_TTL_SECONDS` after its last use.
- **CIMD.** A `client_id` that is a URL is fetched (`cimd.fetch_document`) and cached for the
  document's `max-age` (between `MIN_CACHE_SECONDS` and `MAX_CACHE_SECONDS`); a failed fetch is
  remembered for `MIN_CACHE_SECONDS`. The document must name itself as `client_id`, and its
  `redirect_uris` bind the client. It is a public client (`token_endpoint_auth_method` `none`).
- **Redirect URIs** match exactly, except that a loopback `http` URI matches on any port (RFC 8252 §7.3).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..config import secure_url
from ..storage.facade import FacadeStore
from .cimd import DocumentError, fetch_document, is_document_url
from .errors import OAuthError
from .hashing import digest

MAX_METADATA_BYTES = 8192
MAX_REDIRECT_URIS = 10
MAX_URI_CHARS = 2000
WINDOW_SECONDS = 600
REGISTRATIONS_PER_WINDOW = 200
CLIENT_TTL_SECONDS = 30 * 86_400
TOUCH_SECONDS = 86_400
MIN_CACHE_SECONDS = 60
MAX_CACHE_SECONDS = 86_400
AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
_FORBIDDEN_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "about", "blob"})


@dataclass(frozen=True)
class Client:
    client_id: str
    redirect_uris: tuple[str, ...]
    name: str | None = None
    auth_method: str = "none"
    secret_hash: str | None = None

    @property
    def display_name(self) -> str:
        return self.name or self.client_id

    def redirect_for(self, requested: str | None) -> str | None:
        """The redirect URI to use: `requested` if it matches a registered one (None if not); when
        omitted, the only registered one."""
        if requested is None:
            return self.redirect_uris[0] if len(self.redirect_uris) == 1 else None
        return requested if any(redirect_matches(r, requested) for r in self.redirect_uris) else None

    def secret_matches(self, secret: str | None) -> bool:
        if self.secret_hash is None:
            return True
        return secret is not None and hmac.compare_digest(self.secret_hash, digest(secret))


_LOOPBACK_NETLOC = re.compile(r"(127\.0\.0\.1|localhost|\[::1\])(?::([0-9]{1,5}))?")


def _loopback_without_port(uri: str) -> tuple[str, str, str, str] | None:
    """A loopback `http` URI with its port taken out, or None. Its authority must be exactly a loopback
    host and a port: no credentials, no backslash (browsers read one as `/`, Python as part of the host)."""
    if "\\" in uri:
        return None
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    found = _LOOPBACK_NETLOC.fullmatch(parts.netloc)
    if parts.scheme != "http" or found is None or (found[2] and not 0 < int(found[2]) < 65536):
        return None
    return found[1], parts.path, parts.query, parts.fragment


def redirect_matches(registered: str, requested: str) -> bool:
    """Exact, except that a loopback `http` URI matches on any port (RFC 8252 §7.3): nothing else may differ."""
    if registered == requested:
        return True
    a, b = _loopback_without_port(registered), _loopback_without_port(requested)
    return a is not None and a == b and not b[3]


def check_redirect_uri(uri: object) -> str:
    """A redirect URI a client may register: absolute, no fragment, https, loopback http, or a private-use
    scheme of a native app (`cursor://…`); never `javascript:` and the like."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI_CHARS:
        raise OAuthError("invalid_redirect_uri", "a redirect URI must be a string of at most 2000 characters")
    try:
        parts = urlsplit(uri)
    except ValueError:
        raise OAuthError("invalid_redirect_uri", "a redirect URI is malformed") from None
    scheme = parts.scheme.lower()
    if not scheme or parts.fragment or scheme in _FORBIDDEN_SCHEMES:
        raise OAuthError("invalid_redirect_uri", "a redirect URI must be absolute, without a fragment")
    if "@" in parts.netloc or "\\" in uri:  # the consent page must name the host the browser will go to
        raise OAuthError("invalid_redirect_uri", "a redirect URI must carry no credentials and no backslash")
    if scheme == "http" and not secure_url(uri):  # http: loopback only
        raise OAuthError(
            "invalid_redirect_uri", "an http redirect URI must be on loopback (127.0.0.1, localhost, [::1])"
        )
    if scheme in ("http", "https") and not parts.hostname:
        raise OAuthError("invalid_redirect_uri", "a redirect URI must name a host")
    return uri


def _string(metadata: dict[str, Any], name: str, limit: int = 200) -> str | None:
    value = metadata.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise OAuthError("invalid_client_metadata", f"{name} must be a string of at most {limit} characters")
    return value


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _redirect_uris(metadata: dict[str, Any], error: str = "invalid_redirect_uri") -> tuple[str, ...]:
    uris = metadata.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
        raise OAuthError(error, f"redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs")
    return tuple(check_redirect_uri(uri) for uri in uris)


class Clients:
    def __init__(
        self,
        store: FacadeStore,
        *,
        allow_loopback_documents: bool,
        registrations_per_window: int = REGISTRATIONS_PER_WINDOW,
        clock: Any = time.time,
    ) -> None:
        self.store = store
        self.allow_loopback_documents = allow_loopback_documents
        self.registrations_per_window = registrations_per_window
        self.clock = clock

    async def register(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """RFC 7591 registration: the client's information response (201)."""
        if len(json.dumps(metadata)) > MAX_METADATA_BYTES:
            raise OAuthError("invalid_client_metadata", f"client metadata is limited to {MAX_METADATA_BYTES} bytes")
        uris = _redirect_uris(metadata)
        method = _string(metadata, "token_endpoint_auth_method") or "client_secret_basic"
        if method not in AUTH_METHODS:
            raise OAuthError(
                "invalid_client_metadata",
                "token_endpoint_auth_method must be none, client_secret_post or client_secret_basic",
            )
        grants = metadata.get("grant_types", ["authorization_code"])
        if not _strings(grants) or not set(grants) <= {"authorization_code", "refresh_token"}:
            raise OAuthError(
                "invalid_client_metadata", "grant_types may hold only authorization_code and refresh_token"
            )
        responses = metadata.get("response_types", ["code"])
        if not _strings(responses) or not set(responses) <= {"code"}:
            raise OAuthError("invalid_client_metadata", "response_types may hold only code")
        name = _string(metadata, "client_name")
        now = self.clock()
        window = int(now // WINDOW_SECONDS)
        if not await self.store.count(
            "rate", f"register:{window}", self.registrations_per_window, (window + 1) * WINDOW_SECONDS + 60, now
        ):
            raise OAuthError("temporarily_unavailable", "too many client registrations; try again later", 429)
        client_id = "mcp-" + secrets.token_urlsafe(18)
        secret = secrets.token_urlsafe(32) if method != "none" else None
        row = {
            "redirect_uris": list(uris),
            "name": name,
            "auth_method": method,
            "secret_hash": digest(secret) if secret else None,
            "touched": now,
        }
        await self.store.put("client", client_id, row, now + CLIENT_TTL_SECONDS)
        answer: dict[str, Any] = {
            "client_id": client_id,
            "client_id_issued_at": int(now),
            "redirect_uris": list(uris),
            "token_endpoint_auth_method": method,
            "grant_types": grants,
            "response_types": ["code"],
        }
        if name:
            answer["client_name"] = name
        if secret:
            answer["client_secret"] = secret
            answer["client_secret_expires_at"] = 0
        return answer

    async def find(self, client_id: str | None) -> Client:
        """The client, registered or described by its metadata document; `OAuthError(invalid_client)`."""
        if not client_id or len(client_id) > 2048:
            raise OAuthError("invalid_client", "the client is unknown")
        if is_document_url(client_id):
            return await self._document_client(client_id)
        now = self.clock()
        found = await self.store.get("client", client_id, now)
        if found is None:
            raise OAuthError("invalid_client", "the client is unknown (registrations expire after 30 days unused)")
        row = found[0]
        if now - float(row.get("touched", 0)) > TOUCH_SECONDS:  # registrations expire 30 days after last use
            await self.store.put("client", client_id, {**row, "touched": now}, now + CLIENT_TTL_SECONDS)
        return Client(
            client_id, tuple(row["redirect_uris"]), row.get("name"), row["auth_method"], row.get("secret_hash")
        )

    async def _document_client(self, url: str) -> Client:
        now = self.clock()
        cached = await self.store.get("cimd", url, now)
        if cached is not None:
            row = cached[0]
        else:
            try:
                document, max_age = await asyncio.to_thread(fetch_document, url, self.allow_loopback_documents)
                row = {"client": _document_row(url, document)}
            except (DocumentError, OAuthError) as exc:
                row, max_age = {"error": str(exc)}, MIN_CACHE_SECONDS
            ttl = min(max(max_age, MIN_CACHE_SECONDS), MAX_CACHE_SECONDS)
            await self.store.put("cimd", url, row, now + ttl)
        if "error" in row:
            raise OAuthError("invalid_client", f"the client's metadata document is unusable: {row['error']}")
        client = row["client"]
        return Client(url, tuple(client["redirect_uris"]), client.get("name"), "none")


def _document_row(url: str, document: dict[str, Any]) -> dict[str, Any]:
    if document.get("client_id") != url:
        raise DocumentError("the document's client_id is not its own URL")
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise DocumentError(
            "the facade accepts metadata documents of public clients only (token_endpoint_auth_method none)"
        )
    uris = _redirect_uris(document, "invalid_client")
    name = document.get("client_name")
    row = {"redirect_uris": list(uris), "name": name[:200] if isinstance(name, str) else None}
    if len(json.dumps(row)) > MAX_METADATA_BYTES:  # as stored (escaped JSON), like a registration
        raise DocumentError(f"the client's redirect_uris and client_name are limited to {MAX_METADATA_BYTES} bytes")
    return row
