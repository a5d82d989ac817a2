"""`Facade`: the authorization facade's parts, its HTTP routes, and the guard `/mcp` uses in `proxy` mode.

| route | what |
|---|---|
| `GET /.well-known/oauth-authorization-server` (and `/.well-known/openid-configuration`) | RFC 8414 metadata |
| `POST /oauth/register` | Dynamic Client Registration (RFC 7591) |
| `GET /oauth/authorize`, `POST /oauth/consent`, `GET /oauth/callback` | the browser flow (`authorize`) |
| `POST /oauth/token` | the grants (`grants`) |
| `POST /oauth/revoke` | RFC 7009 revocation: the token's sign-in ends (`grants`) |
| `GET /oauth/jwks` | the public key of the facade's tokens |
| `GET /oauth/connections/<name>/start`, `.../callback` | a user connects another service (`connection_flow`) |
| `GET /oauth/connections`, `POST .../<name>/disconnect` | a user sees and removes connections (`connection_pages`) |

Paths are relative to the facade's base: the MCP URL without `/mcp` (a REST API's stage included).
`/mcp` validates the facade's own tokens with the kit's token validator (`auth.tokens`), its keys
taken from the signer, never fetched over HTTP. Refusals are RFC 6749 JSON, fixed text only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..auth.metadata import DPOP_ALGORITHMS
from ..config import LOOPBACK_NAMES, ConfigError, Settings
from ..server.connections import Connection
from ..storage.errors import StorageError
from ..storage.facade import FacadeStore
from .authorize import AuthorizeFlow
from .clients import MAX_METADATA_BYTES, Clients, parse_metadata
from .connection_flow import ConnectionFlow
from .connection_pages import ConnectionPages
from .connection_vault import ConnectionVault, ProviderError
from .credentials import FacadeCredentials
from .dpop import Nonces, Proofs
from .enterprise import GRANT_PROFILE
from .errors import OAuthError
from .families import Families
from .forms import form_fields
from .grants import Grants
from .limits import Limits, source_address
from .pages import error_page
from .registered import CLIENT_CREDENTIALS, JWT_BEARER, Registry
from .resource_guard import FacadeGuard, token_guard
from .sealing import StateKeys
from .signing import Signer, SigningError, jwks, signer_for
from .token_sealing import SealingError, token_sealing
from .upstream import Upstream, UpstreamError

logger = logging.getLogger("lambda_mcp.auth")
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def _json(document: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(document, status, headers={**_NO_STORE, **(headers or {})})


def refusal(exc: OAuthError) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Basic realm="oauth"'} if exc.status == 401 else {}
    headers.update(exc.headers)
    if exc.retry_after is not None:
        headers["Retry-After"] = str(exc.retry_after)
    return _json(exc.body(), exc.status, headers)


class Facade:
    def __init__(
        self,
        settings: Settings,
        store: FacadeStore,
        *,
        signer: Signer | None = None,
        upstream: Upstream | None = None,
        server_name: str = "this MCP server",
        tool_scopes: Callable[[], frozenset[str]] = frozenset,
        state_keys: Callable[[], Sequence[bytes]] | None = None,
        limits: Mapping[str, int] | None = None,
        clock: Callable[[], float] = time.time,
        connections: Mapping[str, Connection] | None = None,
    ) -> None:
        """`tool_scopes`: the scopes the app's tools, resources and prompts need (the facade may grant them);
        `state_keys`: the state key's versions (they seal the upstream's refresh tokens); `limits`: other
        numbers for `limits.LIMITS`."""
        resource, issuer = settings.proxy_resource, settings.auth_issuer
        assert resource and issuer, "Settings.check ensures proxy mode names its resource"
        self.settings = settings
        self.resource = resource
        self.issuer = issuer
        self.base_path = urlsplit(issuer).path.rstrip("/")
        self.store = store
        self.clock = clock
        self.server_name = server_name
        self.signer = signer or signer_for(settings.auth_signing_key, settings.auth_signing_key_id)
        self.upstream = upstream or Upstream(settings, issuer + "/oauth/callback")
        self.tool_scopes = tool_scopes
        self.state_keys = StateKeys(state_keys, "upstream refresh token")
        self.limits = Limits(store, clock, limits)
        local = (urlsplit(resource).hostname or "") in LOOPBACK_NAMES
        self.clients = Clients(store, self.limits, allow_loopback_documents=local, clock=clock)
        self.families = Families(self)
        self.flow = AuthorizeFlow(self)
        self.registry = Registry(settings.auth_clients)
        nonce_keys = StateKeys(state_keys, "dpop nonce")
        nonces = Nonces(nonce_keys.keys, clock) if settings.auth_dpop_nonce else None
        if nonces is not None and not nonce_keys.keys():
            raise ConfigError("LAMBDA_MCP_AUTH_DPOP_NONCE=on needs the state key (LAMBDA_MCP_STATE_KEY) to make nonces")
        self.proofs = Proofs(store, nonces, clock) if settings.auth_dpop != "off" else None
        self.grants = Grants(self, self.registry, self.proofs)
        self._guard: FacadeGuard | None = None
        vault = ConnectionVault(store, token_sealing(settings.auth_token_key_id, state_keys), clock)
        self.connection_flow = ConnectionFlow(self, connections or {}, vault, state_keys)
        self.flow.connection_sign_in = self.connection_flow.signed_in
        self.connection_pages = ConnectionPages(self, connections or {}, vault)
        self.credentials = FacadeCredentials(self, connections or {}, vault, self.connection_flow)
        """What `ctx.connection` and `ctx.upstream_token` use (the kit hands it to the handler runner)."""

    def path(self, route: str) -> str:
        """A facade route as the browser must request it (a REST API's stage in front)."""
        return self.base_path + route

    def grantable(self, requested: str | None) -> list[str]:
        """The scopes to grant: the required ones (`LAMBDA_MCP_AUTH_SCOPES`, always), and those asked for,
        each of which must be required or needed by a tool, resource or prompt (`offline_access` aside)."""
        required = list(self.settings.auth_scopes)
        # `offline_access` asks for a refresh token, which every sign-in gets: accepted, never granted as a scope
        asked = [scope for scope in dict.fromkeys((requested or "").split()) if scope != "offline_access"]
        if not set(asked) <= {*required, *self.tool_scopes()}:
            raise OAuthError("invalid_scope", "a requested scope is not offered by this server")
        return list(dict.fromkeys([*required, *asked]))

    # -- the guard of /mcp ----------------------------------------------------------------------------
    @property
    def guard(self) -> FacadeGuard:
        if self._guard is None:
            self._guard = token_guard(self.settings, self.signer, self.proofs or Proofs(self.store, None, self.clock))
        return self._guard

    # -- routes ---------------------------------------------------------------------------------------
    def routes(self) -> list[Route]:
        return [
            Route("/.well-known/oauth-authorization-server", self.metadata, methods=["GET"]),
            Route("/.well-known/openid-configuration", self.openid_metadata, methods=["GET"]),
            Route("/oauth/register", self.register, methods=["POST"]),
            Route("/oauth/authorize", self.authorize, methods=["GET"]),
            Route("/oauth/consent", self.consent, methods=["POST"]),
            Route("/oauth/callback", self.callback, methods=["GET"]),
            Route("/oauth/token", self.token, methods=["POST"]),
            Route("/oauth/revoke", self.revoke, methods=["POST"]),
            Route("/oauth/jwks", self.jwks, methods=["GET"]),
            Route("/oauth/connections", self.connections_page, methods=["GET"]),
            Route("/oauth/connections/{name}/disconnect", self.connection_disconnect, methods=["POST"]),
            Route("/oauth/connections/{name}/start", self.connection_start, methods=["GET"]),
            Route("/oauth/connections/{name}/callback", self.connection_callback, methods=["GET"]),
        ]

    async def openid_metadata(self, request: Request) -> Response:
        """The same document where OpenID discovery looks: with a path in the issuer (a REST API's stage) it
        is the only well-known form the stage can route. Clients that parse it as OpenID provider metadata
        (the TypeScript SDK) require the two fields OpenID makes mandatory; the facade issues no ID tokens."""
        document = self._metadata() | {
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
        }
        return JSONResponse(document, headers={"Cache-Control": "max-age=300"})

    async def metadata(self, request: Request) -> Response:
        return JSONResponse(self._metadata(), headers={"Cache-Control": "max-age=300"})

    def _metadata(self) -> dict[str, Any]:
        base = self.issuer
        grants = ["authorization_code", "refresh_token"]
        methods = ["none", "client_secret_post", "client_secret_basic"]
        machine: dict[str, Any] = {}
        if self.registry.configured:
            grants.append(CLIENT_CREDENTIALS)
            methods.append("private_key_jwt")
            from ..auth.tokens import ALGORITHMS  # what a client assertion may be signed with (client_auth)

            machine["token_endpoint_auth_signing_alg_values_supported"] = sorted(ALGORITHMS)
            if self.settings.auth_trusted_issuers:
                grants.append(JWT_BEARER)
                machine["authorization_grant_profiles_supported"] = [GRANT_PROFILE]
        if self.proofs is not None:
            machine["dpop_signing_alg_values_supported"] = DPOP_ALGORITHMS.split()
        return {
            "issuer": base,
            "authorization_endpoint": base + "/oauth/authorize",
            "token_endpoint": base + "/oauth/token",
            "registration_endpoint": base + "/oauth/register",
            "revocation_endpoint": base + "/oauth/revoke",
            "revocation_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
            "jwks_uri": base + "/oauth/jwks",
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": grants,
            "token_endpoint_auth_methods_supported": methods,
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": sorted({*self.settings.auth_scopes, *self.tool_scopes()}),
            "client_id_metadata_document_supported": True,
            "authorization_response_iss_parameter_supported": True,
            **machine,
        }

    async def jwks(self, request: Request) -> Response:
        import asyncio

        try:
            document = await asyncio.to_thread(jwks, self.signer)
        except SigningError as exc:
            logger.error("auth: the facade's signing key is unavailable: %s", exc)
            return _json(
                {"error": "temporarily_unavailable", "error_description": "the signing key is unavailable"}, 503
            )
        return JSONResponse(document, headers={"Cache-Control": "max-age=300"})

    async def register(self, request: Request) -> Response:
        body = await _bounded_body(request, MAX_METADATA_BYTES)
        try:
            if body is None:
                raise OAuthError("invalid_client_metadata", f"client metadata is limited to {MAX_METADATA_BYTES} bytes")
            return _json(await self.clients.register(parse_metadata(body), source_address(request)), 201)
        except OAuthError as exc:
            return refusal(exc)
        except StorageError as exc:
            return _unavailable(exc)

    async def authorize(self, request: Request) -> Response:
        try:
            return await self.flow.authorize(request)
        except (StorageError, SigningError) as exc:
            return _unavailable_page(exc)

    async def consent(self, request: Request) -> Response:
        body = await _bounded_body(request, 4096)
        if body is None:
            return error_page("Bad request", "the consent form is too large", 413)
        try:
            fields = form_fields(body, request.headers.get("content-type"))
        except OAuthError:
            return error_page("Bad request", "the consent form is incomplete")
        try:
            return await self.flow.consent(request, fields)
        except (StorageError, SigningError) as exc:
            return _unavailable_page(exc)

    async def callback(self, request: Request) -> Response:
        try:
            return await self.flow.callback(request)
        except (StorageError, SigningError, OAuthError) as exc:
            return _unavailable_page(exc)

    async def connections_page(self, request: Request) -> Response:
        try:
            return await self.connection_pages.list(request)
        except (StorageError, SigningError) as exc:
            return _unavailable_page(exc)

    async def connection_disconnect(self, request: Request) -> Response:
        try:
            return await self.connection_pages.disconnect(request)
        except (StorageError, SigningError) as exc:
            return _unavailable_page(exc)

    async def connection_start(self, request: Request) -> Response:
        try:
            return await self.connection_flow.start(request)
        except (StorageError, SigningError, SealingError, ProviderError) as exc:
            return _unavailable_page(exc)

    async def connection_callback(self, request: Request) -> Response:
        try:
            return await self.connection_flow.callback(request)
        except (StorageError, SigningError, SealingError, ProviderError) as exc:
            return _unavailable_page(exc)

    async def token(self, request: Request) -> Response:
        body = await _bounded_body(request, 16_384)
        if body is None:
            return refusal(OAuthError("invalid_request", "the request body is too large"))
        try:
            fields = form_fields(body, request.headers.get("content-type"))
            return _json(await self.grants.token(request, fields))
        except OAuthError as exc:
            return refusal(exc)
        except (StorageError, SigningError, UpstreamError) as exc:
            return _unavailable(exc)

    async def revoke(self, request: Request) -> Response:
        body = await _bounded_body(request, 16_384)
        if body is None:
            return refusal(OAuthError("invalid_request", "the request body is too large"))
        try:
            await self.grants.revoke(request, form_fields(body, request.headers.get("content-type")))
        except OAuthError as exc:
            return refusal(exc)
        except (StorageError, SigningError) as exc:
            return _unavailable(exc)
        return Response(status_code=200, headers=_NO_STORE)


async def _bounded_body(request: Request, limit: int) -> bytes | None:
    """The body, or None when it is over `limit` bytes (read no further than that)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _unavailable(exc: Exception) -> JSONResponse:
    logger.error("auth: the facade cannot answer: %s", exc)
    body = {
        "error": "temporarily_unavailable",
        "error_description": "the authorization server is unavailable; try again",
    }
    return _json(body, 503, {"Retry-After": "5"})


def _unavailable_page(exc: Exception) -> Response:
    logger.error("auth: the facade cannot answer: %s", exc)
    return error_page("Sign-in is unavailable", "the authorization server is unavailable; try again", 503)
