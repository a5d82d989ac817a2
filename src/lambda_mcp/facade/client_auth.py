"""Who the client at the token and revocation endpoints is: client authentication.

| method | how |
|---|---|
| `none` | a public client (DCR or a metadata document) names itself with `client_id` |
| `client_secret_basic`, `_post` | a DCR client's secret, or an operator client's (its hash in `registered`) |
| `private_key_jwt` | an operator client's RFC 7523 assertion, signed with a key from its `jwks` or `jwks_uri` |

An assertion (`client_assertion_type` `urn:ietf:params:oauth:client-assertion-type:jwt-bearer`) must have
`iss` and `sub` the client's id, `aud` the facade's issuer or its token endpoint, an asymmetric
signature, `exp` in the future and at most `MAX_ASSERTION_SECONDS` away, and a `jti` never seen before: each
is counted in the facade's table until the assertion has expired, so a replay within its lifetime fails.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_plus

from starlette.requests import Request

from .clients import Client
from .errors import OAuthError
from .hashing import digest, key_text
from .registered import ClientsUnavailable, OperatorClient, Registry

if TYPE_CHECKING:
    from ..auth.issuer import Issuer
    from .context import FacadeContext

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
MAX_ASSERTION_SECONDS = 300
LEEWAY_SECONDS = 30
MAX_ASSERTION_BYTES = 8192
_UNKNOWN = "the client is unknown"


def _refused(description: str) -> OAuthError:
    return OAuthError("invalid_client", description, 401)


def operator_client(entry: OperatorClient) -> Client:
    return Client(
        entry.client_id,
        (),
        entry.name,
        entry.auth_method,
        entry.secret_hash,
        entry.grant_types,
        entry.scopes,
    )


class ClientAuthentication:
    def __init__(self, facade: FacadeContext, registry: Registry) -> None:
        self.f = facade
        self.registry = registry
        self._key_sets: dict[str, Issuer] = {}

    async def client(self, request: Request, fields: dict[str, str]) -> Client:
        """The authenticated client; `OAuthError(invalid_client)` (401) when it is not."""
        if "client_assertion" in fields or "client_assertion_type" in fields:
            return await self._asserted(fields)
        client_id, secret = fields.get("client_id"), fields.get("client_secret")
        basic = request.headers.get("authorization", "")
        if basic[:6].lower() == "basic ":
            try:
                pair = base64.b64decode(basic[6:].strip(), validate=True).decode()
            except ValueError:  # binascii.Error, a non-ASCII header value, bytes that are not UTF-8
                raise _refused("the Basic credentials are malformed") from None
            name, _, password = pair.partition(":")
            client_id, secret = unquote_plus(name), unquote_plus(password)
        operator = await self._operator(client_id)
        if operator is not None:
            if operator.secret_hash is None:
                raise _refused("this client authenticates with private_key_jwt")
            if secret is None or not hmac.compare_digest(operator.secret_hash, digest(secret)):
                raise _refused("the client's credentials are wrong")
            return operator_client(operator)
        try:
            client = await self.f.clients.find(client_id)
        except OAuthError:
            raise _refused(_UNKNOWN) from None
        if client.secret_hash is not None and not client.secret_matches(secret):
            raise _refused("the client's credentials are wrong")
        return client

    async def _operator(self, client_id: str | None) -> OperatorClient | None:
        if not client_id or not self.registry.configured or client_id.startswith("mcp-") or "://" in client_id:
            return None
        try:
            return await asyncio.to_thread(self.registry.find, client_id)
        except ClientsUnavailable as exc:
            raise OAuthError("temporarily_unavailable", "the client registry is unavailable; try again", 503) from exc

    async def _asserted(self, fields: dict[str, str]) -> Client:
        import jwt

        from ..auth.tokens import ALGORITHMS

        assertion = fields.get("client_assertion") or ""
        if fields.get("client_assertion_type") != ASSERTION_TYPE or not assertion:
            raise _refused(f"client_assertion_type must be {ASSERTION_TYPE}, with client_assertion")
        if len(assertion) > MAX_ASSERTION_BYTES or assertion.count(".") != 2:
            raise _refused("the client assertion is not a JWT")
        try:
            header = jwt.get_unverified_header(assertion)
            unverified = jwt.decode(assertion, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise _refused("the client assertion cannot be read") from None
        client_id = unverified.get("iss")
        if not isinstance(client_id, str) or unverified.get("sub") != client_id:
            raise _refused("the client assertion's iss and sub must both be the client_id")
        if fields.get("client_id", client_id) != client_id:
            raise _refused("client_id differs from the client assertion's issuer")
        operator = await self._operator(client_id)
        if operator is None or operator.auth_method != "private_key_jwt":
            raise _refused("the client is unknown or does not authenticate with private_key_jwt")
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
            raise _refused("the client assertion's algorithm is not accepted")
        kid = header.get("kid")
        key = await self._key(operator, kid if isinstance(kid, str) else None, algorithm)
        claims = _decoded(assertion, key, algorithm, client_id, [self.f.issuer, self.f.issuer + "/oauth/token"])
        now, expires = self.f.clock(), claims["exp"]
        if not isinstance(expires, int | float) or not expires <= now + MAX_ASSERTION_SECONDS + LEEWAY_SECONDS:
            raise _refused(f"the client assertion must expire within {MAX_ASSERTION_SECONDS} seconds")
        jti = claims.get("jti")
        if not key_text(jti):
            raise _refused("the client assertion needs a jti of 1 to 256 characters")
        if not await self.f.store.count("assertion", digest(client_id, str(jti)), 1, float(expires) + 60, now):
            raise _refused("the client assertion was already used")
        return operator_client(operator)

    async def _key(self, operator: OperatorClient, kid: str | None, algorithm: str) -> Any:
        """The client's key for the assertion: from its `jwks`, or fetched from its `jwks_uri` (kept, and
        refreshed as an issuer's keys are)."""
        import jwt

        from ..auth.issuer import IssuerUnavailable
        from ..auth.tokens import key_fits

        if operator.jwks is not None:
            fitting = [k for k in operator.jwks["keys"] if key_fits(k, algorithm)]
            found = next((k for k in fitting if kid is None or k.get("kid") == kid), None)
            if kid is None and len(fitting) != 1:
                found = None
        else:
            assert operator.jwks_uri is not None
            keys = self._key_sets.get(operator.jwks_uri)
            if keys is None:
                from ..auth.issuer import Issuer

                keys = self._key_sets.setdefault(
                    operator.jwks_uri, Issuer(operator.jwks_uri, jwks_url=operator.jwks_uri)
                )
            try:
                found = await asyncio.to_thread(keys.load, kid, algorithm, key_fits)
            except IssuerUnavailable as exc:
                raise OAuthError(
                    "temporarily_unavailable", "the client's keys cannot be fetched; try again", 503
                ) from exc
        if found is None:
            raise _refused("no key of the client matches the assertion's kid and algorithm")
        try:
            return jwt.PyJWK(found, algorithm=algorithm).key
        except (jwt.PyJWTError, ValueError):
            raise _refused("the client's key does not fit the assertion's algorithm") from None


def _decoded(assertion: str, key: Any, algorithm: str, client_id: str, audiences: list[str]) -> dict[str, Any]:
    import jwt

    try:
        claims: dict[str, Any] = jwt.decode(
            assertion,
            key,
            algorithms=[algorithm],
            audience=audiences,
            issuer=client_id,
            leeway=LEEWAY_SECONDS,
            options={"require": ["exp", "iss", "sub", "aud", "jti"]},
        )
    except jwt.ExpiredSignatureError:
        raise _refused("the client assertion has expired") from None
    except jwt.InvalidAudienceError:
        raise _refused("the client assertion's aud must be the facade's issuer or token endpoint") from None
    except jwt.InvalidSignatureError:
        raise _refused("the client assertion's signature does not verify") from None
    except jwt.PyJWTError as exc:
        raise _refused(f"the client assertion is invalid ({type(exc).__name__})") from None
    return claims
