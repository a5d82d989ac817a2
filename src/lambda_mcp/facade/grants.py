"""`POST /oauth/token`: the `authorization_code` and `refresh_token` grants, and the tokens they issue.

- **Client authentication**: `client_secret_basic`, `client_secret_post`, or none (a public client
  names itself with `client_id`); a registered confidential client must authenticate.
- **Codes** are taken (deleted) before anything else is checked, so a code works once, whatever the
  outcome; then the client, `redirect_uri`, PKCE verifier and `resource` must match.
- **Refresh tokens** are `<family>.<secret>`. The family row holds the hash of the one current token
  (its `version`); a refresh swaps it for the next one with a conditional write. A token that is not
  the current one (it was already used) revokes the family: the legitimate client and the thief both
  have to sign in again. A family lives `FAMILY_SECONDS` from the sign-in, however often it is refreshed.
- **Access tokens** are ES256 JWTs (`typ` `at+jwt`) for the MCP resource, `ACCESS_SECONDS` long, with
  the upstream user's `sub`, the client and the granted scopes.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import secrets
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_plus

from starlette.requests import Request

from .clients import Client
from .errors import OAuthError
from .hashing import digest, s256
from .signing import mint

if TYPE_CHECKING:
    from .context import FacadeContext

ACCESS_SECONDS = 3600
FAMILY_SECONDS = 30 * 86_400
_BAD_GRANT = "the code or refresh token is invalid, expired, used, or was issued to another client"


class Grants:
    def __init__(self, facade: FacadeContext) -> None:
        self.f = facade

    async def token(self, request: Request) -> dict[str, Any]:
        form = await request.form()
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        client = await self._client(request, fields)
        grant = fields.get("grant_type")
        if grant == "authorization_code":
            return await self._code(client, fields)
        if grant == "refresh_token":
            return await self._refresh(client, fields)
        raise OAuthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token")

    async def _client(self, request: Request, fields: dict[str, str]) -> Client:
        client_id, secret = fields.get("client_id"), fields.get("client_secret")
        basic = request.headers.get("authorization", "")
        if basic[:6].lower() == "basic ":
            try:
                pair = base64.b64decode(basic[6:].strip(), validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                raise OAuthError("invalid_client", "the Basic credentials are malformed", 401) from None
            name, _, password = pair.partition(":")
            client_id, secret = unquote_plus(name), unquote_plus(password)
        try:
            client = await self.f.clients.find(client_id)
        except OAuthError:
            raise OAuthError("invalid_client", "the client is unknown", 401) from None
        if client.secret_hash is not None and not client.secret_matches(secret):
            raise OAuthError("invalid_client", "the client's credentials are wrong", 401)
        return client

    async def _code(self, client: Client, fields: dict[str, str]) -> dict[str, Any]:
        code = fields.get("code")
        if not code or len(code) > 512:
            raise OAuthError("invalid_request", "code is required")
        row = await self.f.store.take("code", digest(code), self.f.clock())
        if row is None or row["client_id"] != client.client_id:
            raise OAuthError("invalid_grant", _BAD_GRANT)
        if fields.get("redirect_uri", row["redirect_uri"]) != row["redirect_uri"]:
            raise OAuthError("invalid_grant", "redirect_uri differs from the one the code was issued for")
        verifier = fields.get("code_verifier")
        if not verifier or not 43 <= len(verifier) <= 128 or s256(verifier) != row["challenge"]:
            raise OAuthError("invalid_grant", "the PKCE code_verifier does not match the code_challenge")
        if fields.get("resource", self.f.resource) != self.f.resource:
            raise OAuthError("invalid_target", "resource must be this MCP server's URL")
        family = secrets.token_urlsafe(18)
        now = self.f.clock()
        record = {"client_id": client.client_id, "subject": row["subject"], "scopes": row["scopes"], "created": now}
        refresh = f"{family}.{secrets.token_urlsafe(32)}"
        await self.f.store.put("family", family, record, now + FAMILY_SECONDS, digest(refresh))
        return await self._tokens(client, row["subject"], row["scopes"], refresh)

    async def _refresh(self, client: Client, fields: dict[str, str]) -> dict[str, Any]:
        token = fields.get("refresh_token") or ""
        family, _, _ = token.partition(".")
        if not family or len(token) > 512:
            raise OAuthError("invalid_request", "refresh_token is required")
        now = self.f.clock()
        found = await self.f.store.get("family", family, now)
        if found is None:
            raise OAuthError("invalid_grant", _BAD_GRANT)
        record, current = found
        if current != digest(token):  # an old token again: stolen, or replayed: the family goes
            await self.f.store.delete("family", family)
            raise OAuthError("invalid_grant", _BAD_GRANT)
        if record["client_id"] != client.client_id:
            raise OAuthError("invalid_grant", _BAD_GRANT)
        scopes = record["scopes"]
        asked = [scope for scope in (fields.get("scope") or "").split() if scope != "offline_access"]
        if asked:
            if not set(asked) <= set(scopes):
                raise OAuthError("invalid_scope", "a refresh may ask only for scopes already granted")
            scopes = asked
        if fields.get("resource", self.f.resource) != self.f.resource:
            raise OAuthError("invalid_target", "resource must be this MCP server's URL")
        following = f"{family}.{secrets.token_urlsafe(32)}"
        expires = float(record["created"]) + FAMILY_SECONDS
        if not await self.f.store.swap("family", family, current, record, expires, digest(following), now):
            await self.f.store.delete("family", family)  # two refreshes with one token: one is a replay
            raise OAuthError("invalid_grant", _BAD_GRANT)
        return await self._tokens(client, record["subject"], scopes, following)

    async def _tokens(self, client: Client, subject: str, scopes: list[str], refresh: str) -> dict[str, Any]:
        now = int(self.f.clock())
        claims = {
            "iss": self.f.issuer,
            "aud": self.f.resource,
            "sub": subject,
            "client_id": client.client_id,
            "scope": " ".join(scopes),
            "iat": now,
            "exp": now + ACCESS_SECONDS,
            "jti": secrets.token_urlsafe(12),
        }
        access = await asyncio.to_thread(mint, self.f.signer, claims)
        answer = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ACCESS_SECONDS,
            "refresh_token": refresh,
        }
        if scopes:
            answer["scope"] = " ".join(scopes)
        return answer
