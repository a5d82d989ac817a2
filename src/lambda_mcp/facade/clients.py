"""The facade's clients: Dynamic Client Registration (RFC 7591) and Client ID Metadata Documents.

- **DCR.** A registration is at most `MAX_METADATA_BYTES` of JSON (nested at most `MAX_DEPTH` deep)
  with at most `MAX_REDIRECT_URIS` redirect URIs (`redirects.check_redirect_uri`); registrations are
  limited per source address and in all (`limits`: `register:ip`, `register:all`). A registered client
  lives `CLIENT_TTL_SECONDS` after its last use. A registration whose write fails is deleted again
  (it may have landed: nobody would ever learn its id). Its `grant_types` are kept: a client that lists them
  gets only those; one that leaves the field out gets both grants.
- **CIMD.** A `client_id` that is a URL is fetched (`cimd.fetch_document`; fetches are limited per
  source address, per target host and in all) and cached for the document's `max-age` (between
  `MIN_CACHE_SECONDS` and `MAX_CACHE_SECONDS`); a failed fetch is remembered for `MIN_CACHE_SECONDS`.
  The document must name itself as `client_id`, and its `redirect_uris` bind the client. It is a public
  client (`token_endpoint_auth_method` `none`). The client is told one fixed text when a document
  cannot be used; what went wrong is logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import secrets
import time
import unicodedata
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..storage.errors import StorageError
from ..storage.facade import FacadeStore
from .cimd import DocumentError, fetch_document, is_document_url
from .errors import OAuthError
from .hashing import digest
from .limits import Limits
from .redirects import check_redirect_uri, redirect_matches

logger = logging.getLogger("lambda_mcp.auth")
MAX_METADATA_BYTES = 8192
MAX_DEPTH = 8
MAX_REDIRECT_URIS = 10
CLIENT_TTL_SECONDS = 30 * 86_400
TOUCH_SECONDS = 86_400
MIN_CACHE_SECONDS = 60
MAX_CACHE_SECONDS = 86_400
AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
GRANT_TYPES = ("authorization_code", "refresh_token")
DOCUMENT_UNUSABLE = "the client's metadata document could not be used"


@dataclass(frozen=True)
class Client:
    client_id: str
    redirect_uris: tuple[str, ...]
    name: str | None = None
    auth_method: str = "none"
    secret_hash: str | None = None
    grant_types: tuple[str, ...] | None = None
    """What the client registered; None when it left the field out (both grants)."""
    scopes: tuple[str, ...] | None = None
    """An operator-registered client's scopes (`registered`); None for a DCR or document client."""

    @property
    def display_name(self) -> str:
        return self.name or self.client_id

    def allows(self, grant: str) -> bool:
        return grant in (self.grant_types or GRANT_TYPES)

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


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether JSON `value` nests arrays and objects more than `limit` deep (checked without recursion)."""
    level: list[object] = [value]
    for _ in range(limit + 1):
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item if isinstance(item, list) else ())
            if isinstance(child, dict | list)
        ]
        if not level:
            return False
    return True


def parse_metadata(body: bytes, error: str = "invalid_client_metadata") -> dict[str, Any]:
    """A JSON object of client metadata, or `OAuthError(error)` (not JSON, not an object, too deep)."""
    try:
        metadata = json.loads(body)
    except (ValueError, RecursionError):
        raise OAuthError(error, "the client metadata must be a JSON object") from None
    if not isinstance(metadata, dict):
        raise OAuthError(error, "the client metadata must be a JSON object")
    if too_deep(metadata):
        raise OAuthError(error, f"the client metadata nests deeper than {MAX_DEPTH} levels")
    return metadata


def _string(metadata: dict[str, Any], name: str, limit: int = 200) -> str | None:
    value = metadata.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit or not displayable(value):
        raise OAuthError(
            "invalid_client_metadata", f"{name} must be a string of at most {limit} characters, without controls"
        )
    return value


def displayable(text: str) -> bool:
    """Whether `text` holds no control, format (bidirectional overrides: a name shown backwards), surrogate,
    private-use or unassigned character: what a consent page can show as it is."""
    return not any(unicodedata.category(ch)[0] == "C" for ch in text)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _redirect_uris(metadata: dict[str, Any], error: str = "invalid_redirect_uri") -> tuple[str, ...]:
    uris = metadata.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
        raise OAuthError(error, f"redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs")
    try:
        return tuple(check_redirect_uri(uri) for uri in uris)
    except OAuthError as exc:
        raise OAuthError(error, exc.description) from None


def _grant_types(metadata: dict[str, Any], error: str = "invalid_client_metadata") -> tuple[str, ...] | None:
    grants = metadata.get("grant_types")
    if grants is None:
        return None
    if not _strings(grants) or not set(grants) <= set(GRANT_TYPES) or "authorization_code" not in grants:
        raise OAuthError(error, "grant_types must hold authorization_code, and may hold refresh_token")
    return tuple(dict.fromkeys(grants))


class Clients:
    def __init__(
        self,
        store: FacadeStore,
        limits: Limits,
        *,
        allow_loopback_documents: bool,
        clock: Any = time.time,
    ) -> None:
        self.store = store
        self.limits = limits
        self.allow_loopback_documents = allow_loopback_documents
        self.clock = clock

    async def register(self, metadata: dict[str, Any], source: str) -> dict[str, Any]:
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
        grants = _grant_types(metadata)
        responses = metadata.get("response_types", ["code"])
        if not _strings(responses) or not set(responses) <= {"code"}:
            raise OAuthError("invalid_client_metadata", "response_types may hold only code")
        name = _string(metadata, "client_name")
        await self.limits.spend("register:ip", source, "client registrations from this address")
        await self.limits.spend("register:all", "all", "client registrations")
        now = self.clock()
        client_id = "mcp-" + secrets.token_urlsafe(18)
        secret = secrets.token_urlsafe(32) if method != "none" else None
        row = {
            "redirect_uris": list(uris),
            "name": name,
            "auth_method": method,
            "secret_hash": digest(secret) if secret else None,
            "grant_types": list(grants) if grants is not None else None,
            "touched": now,
        }
        try:
            await self.store.put("client", client_id, row, now + CLIENT_TTL_SECONDS)
        except StorageError:  # it may have landed: the client never learns its id, so nobody may keep it
            with contextlib.suppress(StorageError):
                await self.store.delete("client", client_id)
            raise
        answer: dict[str, Any] = {
            "client_id": client_id,
            "client_id_issued_at": int(now),
            "redirect_uris": list(uris),
            "token_endpoint_auth_method": method,
            "grant_types": list(grants or GRANT_TYPES),
            "response_types": ["code"],
        }
        if name:
            answer["client_name"] = name
        if secret:
            answer["client_secret"] = secret
            answer["client_secret_expires_at"] = 0
        return answer

    async def find(self, client_id: str | None, source: str = "unknown") -> Client:
        """The client, registered or described by its metadata document; `OAuthError(invalid_client)`, or
        a 429 when fetching its document is over a limit."""
        if not client_id or len(client_id) > 2048:
            raise OAuthError("invalid_client", "the client is unknown")
        if is_document_url(client_id):
            return await self._document_client(client_id, source)
        now = self.clock()
        found = await self.store.get("client", client_id, now)
        if found is None:
            raise OAuthError("invalid_client", "the client is unknown (registrations expire after 30 days unused)")
        row = found[0]
        if now - float(row.get("touched", 0)) > TOUCH_SECONDS:  # registrations expire 30 days after last use
            await self.store.put("client", client_id, {**row, "touched": now}, now + CLIENT_TTL_SECONDS)
        grants = row.get("grant_types")
        return Client(
            client_id,
            tuple(row["redirect_uris"]),
            row.get("name"),
            row["auth_method"],
            row.get("secret_hash"),
            tuple(grants) if grants is not None else None,
        )

    async def _document_client(self, url: str, source: str) -> Client:
        now = self.clock()
        cached = await self.store.get("cimd", url, now)
        if cached is not None:
            row = cached[0]
        else:
            await self.limits.spend("cimd:ip", source, "client metadata fetches from this address")
            await self.limits.spend("cimd:host", (urlsplit(url).hostname or "")[:253], "fetches from that host")
            await self.limits.spend("cimd:all", "all", "client metadata fetches")
            try:
                document, max_age = await asyncio.to_thread(fetch_document, url, self.allow_loopback_documents)
                row = {"client": _document_row(url, document)}
            except (DocumentError, OAuthError) as exc:
                logger.info("auth: the client metadata document %s cannot be used: %s", url[:300], _detail(exc))
                row, max_age = {"error": True}, MIN_CACHE_SECONDS
            ttl = min(max(max_age, MIN_CACHE_SECONDS), MAX_CACHE_SECONDS)
            await self.store.put("cimd", url, row, now + ttl)
        if "error" in row:
            raise OAuthError("invalid_client", DOCUMENT_UNUSABLE)
        client = row["client"]
        grants = client.get("grant_types")
        return Client(
            url, tuple(client["redirect_uris"]), client.get("name"), "none", None, tuple(grants) if grants else None
        )


def _detail(exc: Exception) -> str:
    detail = getattr(exc, "detail", None)
    return detail if isinstance(detail, str) else getattr(exc, "description", None) or str(exc)


def _document_row(url: str, document: dict[str, Any]) -> dict[str, Any]:
    if too_deep(document):
        raise DocumentError(f"the document nests deeper than {MAX_DEPTH} levels")
    if document.get("client_id") != url:
        raise DocumentError("the document's client_id is not its own URL")
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise DocumentError(
            "the facade accepts metadata documents of public clients only (token_endpoint_auth_method none)"
        )
    uris = _redirect_uris(document, "invalid_client")
    grants = _grant_types(document, "invalid_client")
    name = document.get("client_name")
    if name is not None and (not isinstance(name, str) or not displayable(name)):
        raise DocumentError("the document's client_name is not text a page can show")
    row = {
        "redirect_uris": list(uris),
        "name": name[:200] if isinstance(name, str) else None,
        "grant_types": list(grants) if grants is not None else None,
    }
    if len(json.dumps(row)) > MAX_METADATA_BYTES:  # as stored (escaped JSON), like a registration
        raise DocumentError(f"the client's redirect_uris and client_name are limited to {MAX_METADATA_BYTES} bytes")
    return row
