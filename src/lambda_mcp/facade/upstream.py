"""The upstream OpenID provider as the facade uses it: where to send the user, and what its code is worth.

Its metadata and keys come from `auth.issuer.Issuer` (discovered once, failures remembered); the
user's subject comes from the ID token (validated like any token: signature from its JWKS, `iss`,
`aud` = the facade's client, `exp`, and the `nonce` the facade sent), else from the userinfo
endpoint. The client secret is `LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET`, or the Secrets Manager
secret `…_SECRET_ARN` names, read when first needed and cached for five minutes. The upstream's access
and ID tokens are used for that one lookup and dropped; its refresh token is kept, sealed, in the
sign-in's row, so that the facade's refreshes can ask the upstream again whether the user may still sign
in (`refresh`). Everything here blocks except `identity`.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlencode, urlsplit

from ..auth.fetch import FetchError
from ..auth.issuer import Issuer, IssuerUnavailable
from ..config import Settings, secure_url
from .errors import OAuthError

MAX_BYTES = 65_536
TIMEOUT_SECONDS = 10.0
SECRET_MAX_AGE = 300


class UpstreamError(Exception):
    """The upstream refused or failed (logged in full; the client sees a fixed error). `code` is the OAuth
    error the upstream answered a 4xx with (`invalid_grant`, ...), if any."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        raise UpstreamError("the upstream answered with a redirect")


_OPENER = urllib.request.build_opener(_NoRedirects)


def call(request: urllib.request.Request) -> dict[str, Any]:
    if not secure_url(request.full_url):
        raise UpstreamError(f"refusing {request.full_url}: https:// is required (http:// only on loopback)")
    try:
        with _OPENER.open(request, timeout=TIMEOUT_SECONDS) as response:
            body = response.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        detail = exc.read(2048).decode(errors="replace")
        raise UpstreamError(f"{request.full_url} answered {exc.code}: {detail}", _oauth_error(detail)) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise UpstreamError(f"could not reach {request.full_url}: {exc}") from None
    try:
        document = json.loads(body[:MAX_BYTES])
    except ValueError:
        raise UpstreamError(f"{request.full_url} did not answer JSON") from None
    if not isinstance(document, dict):
        raise UpstreamError(f"{request.full_url} did not answer a JSON object")
    return document


_CLAIM_SCOPES = {
    **dict.fromkeys(("email", "email_verified"), "email"),
    **dict.fromkeys(("phone_number", "phone_number_verified"), "phone"),
    "address": "address",
    **dict.fromkeys(
        ("name", "family_name", "given_name", "middle_name", "nickname", "preferred_username", "profile", "picture"),
        "profile",
    ),
    **dict.fromkeys(("website", "gender", "birthdate", "zoneinfo", "locale", "updated_at"), "profile"),
}
"""The OpenID Connect scope that asks for each standard claim (Core §5.4)."""


def _oauth_error(body: str) -> str | None:
    try:
        found = json.loads(body)
    except ValueError:
        return None
    code = found.get("error") if isinstance(found, dict) else None
    return code if isinstance(code, str) else None


TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"


class Upstream:
    def __init__(self, settings: Settings, redirect_uri: str, issuer: Issuer | None = None) -> None:
        assert settings.auth_upstream_issuer and settings.auth_upstream_client_id
        self.issuer = issuer or Issuer(settings.auth_upstream_issuer)
        self.client_id = settings.auth_upstream_client_id
        self.redirect_uri = redirect_uri
        self.scopes = " ".join(dict.fromkeys(["openid", *settings.auth_scopes]))
        self.wanted_claims = frozenset(
            [*settings.auth_upstream_claims, *(claim for claim, _ in settings.auth_upstream_require)]
        )
        """Claims the facade reads of the user: the ID token's, and userinfo's when it lacks one of these."""
        self._secret = settings.auth_upstream_client_secret
        self._secret_arn = settings.auth_upstream_client_secret_arn
        self._validator: Any = None

    def metadata(self) -> dict[str, Any]:
        try:
            return self.issuer.metadata()
        except IssuerUnavailable as exc:
            raise UpstreamError(str(exc)) from None

    def _endpoint(self, name: str) -> str:
        url = self.metadata().get(name)
        if not isinstance(url, str) or not secure_url(url):
            raise UpstreamError(f"the upstream's metadata names no usable {name}")
        return url

    def authorize_url(self, state: str, challenge: str, nonce: str) -> str:
        """Where the browser signs in. Beside `openid` and the configured scopes it asks for the OpenID
        scopes of the claims the facade wants (`email`, `profile`, ...) and `offline_access`, where the
        upstream lists them (Entra ID and Okta issue a refresh token only then); Google, which lists
        neither, issues one for `access_type=offline`."""
        offered = self.metadata().get("scopes_supported")
        offered = set(offered) if isinstance(offered, list) else None
        wanted = [scope for claim in sorted(self.wanted_claims) if (scope := _CLAIM_SCOPES.get(claim))]
        extra = [s for s in dict.fromkeys([*wanted, "offline_access"]) if offered is not None and s in offered]
        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "scope": " ".join(dict.fromkeys([*self.scopes.split(), *extra])),
            "state": state,
            "nonce": nonce,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        if self.issuer.url.rstrip("/") == "https://accounts.google.com":
            query["access_type"] = "offline"
        endpoint = self._endpoint("authorization_endpoint")
        return endpoint + ("&" if "?" in endpoint else "?") + urlencode(query)

    def client_secret(self) -> str | None:
        """The plain setting, or the Secrets Manager secret (Powertools Parameters caches it `SECRET_MAX_AGE`)."""
        if not self._secret_arn:
            return self._secret
        from aws_lambda_powertools.utilities.parameters import get_secret

        try:
            return str(get_secret(self._secret_arn, max_age=SECRET_MAX_AGE))
        except Exception as exc:  # denied, throttled, unreachable
            raise UpstreamError(f"the upstream client secret could not be read: {exc}") from exc

    def exchange(self, code: str, verifier: str) -> dict[str, Any]:
        """The upstream's token response for `code`."""
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": verifier,
        }
        return self._token(form)

    def refresh(self, refresh_token: str) -> dict[str, Any]:
        """The upstream's token response for its refresh token: `UpstreamError` with `code` `invalid_grant`
        when the upstream will no longer sign the user in (disabled, signed out, consent withdrawn)."""
        return self._token({"grant_type": "refresh_token", "refresh_token": refresh_token})

    def exchange_token(self, subject_token: str, audience: str, scopes: list[str]) -> dict[str, Any]:
        """A token for `audience` in exchange for the user's upstream access token: RFC 8693 token exchange
        where the upstream lists it, Entra ID's on-behalf-of flow (the jwt-bearer form) on Entra;
        `UpstreamError` (code `unsupported_grant_type`) when the upstream offers neither."""
        grants = self.metadata().get("grant_types_supported")
        host = urlsplit(self.issuer.url).hostname or ""
        if host == "login.microsoftonline.com" or host.endswith(".ciamlogin.com"):
            form = {
                "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
                "assertion": subject_token,
                "requested_token_use": "on_behalf_of",
                "scope": " ".join(scopes) or f"{audience.rstrip('/')}/.default",
            }
            return self._token(form)
        if isinstance(grants, list) and TOKEN_EXCHANGE not in grants:
            raise UpstreamError(
                "the identity provider does not offer token exchange (RFC 8693)", "unsupported_grant_type"
            )
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": subject_token,
            "subject_token_type": "urn:ietf:params:oauth:token-type:access_token",
            "requested_token_type": "urn:ietf:params:oauth:token-type:access_token",
            "audience": audience,
        }
        if scopes:
            form["scope"] = " ".join(scopes)
        return self._token(form)

    def _token(self, form: dict[str, str]) -> dict[str, Any]:
        """A token request (client authentication: `client_secret_basic`, or `client_secret_post` when the
        upstream supports only that; none for a public client)."""
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
            "User-Agent": "lambda-mcp",
        }
        secret = self.client_secret()
        methods = self.metadata().get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        if secret is None or ("client_secret_basic" not in methods and "client_secret_post" in methods):
            form["client_id"] = self.client_id
            if secret is not None:
                form["client_secret"] = secret
        else:
            pair = f"{_form_quote(self.client_id)}:{_form_quote(secret)}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        request = urllib.request.Request(
            self._endpoint("token_endpoint"), urlencode(form).encode(), headers, method="POST"
        )
        return call(request)

    async def identity(self, tokens: dict[str, Any], nonce: str | None, subject: str | None = None) -> dict[str, Any]:
        """The signed-in user's claims (`sub` always): the validated ID token's (carrying `nonce`, at sign-in;
        none is sent on a refresh), completed from userinfo when it lacks a claim the facade wants or when
        there is no ID token. `subject`: the user must be this one (a refresh)."""
        import asyncio

        claims: dict[str, Any] = {}
        id_token = tokens.get("id_token")
        if isinstance(id_token, str):
            from ..auth.tokens import TokenError, TokenValidator

            if self._validator is None:
                self._validator = TokenValidator(self.issuer)
            try:
                validated = await self._validator.validate(id_token, self.client_id)
            except (TokenError, IssuerUnavailable) as exc:
                raise UpstreamError(f"the upstream's ID token is not acceptable: {exc}") from None
            if nonce is not None and validated.claims.get("nonce") != nonce:
                raise UpstreamError("the upstream's ID token carries another nonce")
            claims = dict(validated.claims)
        access = tokens.get("access_token")
        if not claims or not self.wanted_claims <= claims.keys():
            if not isinstance(access, str):
                if claims:
                    return claims
                raise UpstreamError("the upstream's token response holds neither an ID token nor an access token")
            if claims and not self.metadata().get("userinfo_endpoint"):
                return claims
            found = await asyncio.to_thread(self._userinfo, access)
            if claims and found.get("sub") != claims.get("sub"):  # OpenID Connect Core §5.3.2
                raise UpstreamError("the upstream's userinfo names another subject than its ID token")
            claims = {**found, **claims}
        sub = claims.get("sub")
        if not isinstance(sub, str) or not sub:
            raise UpstreamError("the upstream names no subject for the user")
        if subject is not None and sub != subject:
            raise UpstreamError("the upstream's refreshed identity is another user")
        return claims

    def _userinfo(self, access_token: str) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {access_token}", "Accept": "application/json"}
        return call(urllib.request.Request(self._endpoint("userinfo_endpoint"), headers=headers))


def _form_quote(value: str) -> str:
    """RFC 6749 §2.3.1: client id and secret are form-encoded before Basic authentication."""
    from urllib.parse import quote_plus

    return quote_plus(value)


def upstream_failure(exc: UpstreamError | FetchError) -> OAuthError:
    return OAuthError("temporarily_unavailable", "the identity provider could not be reached; try again", 503)
