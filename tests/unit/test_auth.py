"""Auth pieces on their own: settings, principals, identities on API Gateway events, challenges, the
protected resource metadata, the REST authorizer's policies, and the token validator's key cache."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from lambda_mcp.auth.authorizer import Unauthorized, api_arn, authorize, default_audience
from lambda_mcp.auth.gateway import gateway_identity
from lambda_mcp.auth.guard import BearerGuard, bearer_token, guard_for
from lambda_mcp.auth.identity import jwt_principal, scopes_of
from lambda_mcp.auth.issuer import Issuer
from lambda_mcp.auth.metadata import challenge, protected_resource_metadata
from lambda_mcp.auth.tokens import TokenError, TokenValidator
from lambda_mcp.config import ConfigError, Settings, require_auth_choice
from tests.support.issuer import LocalIssuer


# -- settings ----------------------------------------------------------------------------------
def test_the_auth_mode_must_be_chosen_where_the_http_function_runs() -> None:
    with pytest.raises(ConfigError, match="LAMBDA_MCP_AUTH is not set"):
        require_auth_choice({})
    require_auth_choice({"LAMBDA_MCP_AUTH": "none"})
    assert Settings.from_env({}, default_auth="none").auth == "none"
    with pytest.raises(ConfigError, match="LAMBDA_MCP_AUTH must be one of none, jwt, gateway, proxy, not 'open'"):
        Settings.from_env({"LAMBDA_MCP_AUTH": "open"})


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"LAMBDA_MCP_AUTH": "jwt"}, "LAMBDA_MCP_AUTH=jwt needs LAMBDA_MCP_AUTH_ISSUER"),
        ({"LAMBDA_MCP_AUTH": "jwt", "LAMBDA_MCP_AUTH_ISSUER": "http://issuer.example.com"}, "must be an https:// URL"),
        ({"LAMBDA_MCP_AUTH": "none", "LAMBDA_MCP_RESOURCE_URL": "ftp://x/mcp"}, "LAMBDA_MCP_RESOURCE_URL must be"),
        ({"LAMBDA_MCP_AUTH": "none", "LAMBDA_MCP_MAX_BODY_BYTES": "1MB"}, "LAMBDA_MCP_MAX_BODY_BYTES must be a whole"),
        ({"LAMBDA_MCP_AUTH": "none", "LAMBDA_MCP_TRUST_EVENT_DOMAIN": "maybe"}, "LAMBDA_MCP_TRUST_EVENT_DOMAIN must"),
    ],
)
def test_bad_settings_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Settings.from_env(env)


def test_a_loopback_http_issuer_is_accepted_for_local_work() -> None:
    settings = Settings.from_env(
        {"LAMBDA_MCP_AUTH": "JWT", "LAMBDA_MCP_AUTH_ISSUER": "http://127.0.0.1:9000", "LAMBDA_MCP_AUTH_SCOPES": "a,b c"}
    )
    assert (settings.auth, settings.auth_scopes) == ("jwt", ("a", "b", "c"))


# -- principals and scopes ---------------------------------------------------------------------
def test_the_principal_names_the_issuer_so_equal_subjects_of_two_issuers_never_meet() -> None:
    one = jwt_principal({"iss": "https://a.example.com", "sub": "alice"})
    other = jwt_principal({"iss": "https://b.example.com", "sub": "alice"})
    assert one == "https://a.example.com#alice" and other != one
    assert jwt_principal({"iss": "https://a.example.com", "client_id": "svc"}) == "client:https://a.example.com#svc"
    assert jwt_principal({"sub": "alice"}) is None  # no issuer: nothing to bind to
    assert jwt_principal({"iss": "https://a.example.com"}) is None
    assert jwt_principal({"iss": "lambda-authorizer", "sub": "x"}) is None  # not an issuer URL


def test_a_client_token_never_shares_a_principal_with_a_subject_that_looks_like_it() -> None:
    """Review finding 8: `sub="client:billing-svc"` and a token of client `billing-svc` without `sub`
    were both `<iss>#client:billing-svc`."""
    iss = "https://a.example.com"
    subject = jwt_principal({"iss": iss, "sub": "client:billing-svc"})
    client = jwt_principal({"iss": iss, "client_id": "billing-svc"})
    assert subject is not None and client is not None and subject != client
    # nor with an IAM ARN or a Lambda authorizer's principal, whatever the subject
    assert jwt_principal({"iss": iss, "sub": "arn:aws:iam::1:user/ci"}) != "arn:aws:iam::1:user/ci"


def test_scopes_are_read_from_every_shape_they_come_in() -> None:
    assert scopes_of("a b  c") == {"a", "b", "c"}
    assert scopes_of(["a", "b", 3]) == {"a", "b"}
    assert scopes_of("[a b]") == {"a", "b"}  # API Gateway's stringified claim arrays
    assert scopes_of(None) == frozenset()


# -- identities on API Gateway events ------------------------------------------------------------
def _event(authorizer: Any = None, identity: Any = None, rest: bool = False) -> dict[str, Any]:
    context: dict[str, Any] = {}
    if authorizer is not None:
        context["authorizer"] = authorizer
    if identity is not None:
        context["identity"] = identity
    event: dict[str, Any] = {"requestContext": context}
    if rest:
        event["httpMethod"] = "POST"
    return event


ISS = "https://issuer.example.com"


@pytest.mark.parametrize(
    ("event", "principal", "scopes"),
    [
        (
            _event({"jwt": {"claims": {"iss": ISS, "sub": "alice"}, "scopes": ["mcp:tools"]}}),
            f"{ISS}#alice",
            {"mcp:tools"},
        ),
        (
            _event({"jwt": {"claims": {"iss": ISS, "sub": "alice", "scope": "a b"}, "scopes": None}}),
            f"{ISS}#alice",
            {"a", "b"},
        ),
        (_event({"jwt": {"claims": {"iss": ISS, "client_id": "svc"}}}), f"client:{ISS}#svc", set()),  # no sub
        (_event({"claims": {"iss": ISS, "sub": "bob", "scope": "x"}}, rest=True), f"{ISS}#bob", {"x"}),  # Cognito
        (_event({"principalId": "user-7", "scope": "r w"}, rest=True), "lambda-authorizer#user-7", {"r", "w"}),
        (_event({"lambda": {"principal": "svc-1"}}), "lambda-authorizer#svc-1", set()),  # no principalId
        (_event({"iam": {"userArn": "arn:aws:iam::1:user/ci"}}), "arn:aws:iam::1:user/ci", set()),
        (
            _event(identity={"userArn": "arn:aws:sts::1:assumed-role/r/s"}, rest=True),
            "arn:aws:sts::1:assumed-role/r/s",
            set(),
        ),
    ],
)
def test_the_identity_an_authorizer_put_on_the_event_is_read(
    event: dict[str, Any], principal: str, scopes: set[str]
) -> None:
    identity = gateway_identity(event)
    assert identity is not None and identity.principal == principal and identity.scopes == scopes


@pytest.mark.parametrize(
    "event",
    [
        _event(),
        _event({"jwt": {"claims": "not an object"}}),
        _event({"jwt": {"claims": {"sub": "alice"}}}),  # no issuer
        _event({"lambda": {"tenant": "t1"}}),  # a Lambda authorizer context naming nobody
        _event({"iam": {"userArn": None}}),
        _event({"claims": ["x"]}),
        "not an event",
        {"requestContext": "nope"},
    ],
)
def test_an_event_without_a_usable_identity_yields_none_and_never_raises(event: Any) -> None:
    assert gateway_identity(event) is None


# -- challenges and metadata -----------------------------------------------------------------
def test_challenges_quote_their_values_and_never_advertise_offline_access() -> None:
    assert challenge("https://x/.well-known/oauth-protected-resource/mcp") == (
        'Bearer resource_metadata="https://x/.well-known/oauth-protected-resource/mcp"'
    )
    text = challenge(
        "https://x/m", error="invalid_token", description='bad "q"\n\\', scopes=["b", "a", "offline_access"]
    )
    assert text == (
        'Bearer error="invalid_token", scope="a b", resource_metadata="https://x/m", '
        'error_description="bad \\"q\\"?\\\\"'
    )
    # review finding 1: a value a header cannot carry (not latin-1) or a long one never breaks the header
    hostile = challenge("https://x/m", error="invalid_token", description="\u2603" * 9000)
    hostile.encode("latin-1")
    assert len(hostile) < 300 and "\u2603" not in hostile
    document = protected_resource_metadata("https://x/mcp", ISS, {"b", "a", "offline_access"}, "weather")
    assert document == {
        "resource": "https://x/mcp",
        "authorization_servers": [ISS],
        "scopes_supported": ["a", "b"],
        "bearer_methods_supported": ["header"],
        "resource_name": "weather",
    }


def test_only_a_bearer_authorization_header_carries_a_token() -> None:
    assert bearer_token("Bearer abc.def.ghi") == "abc.def.ghi"
    assert bearer_token("bearer   abc") == "abc"
    assert bearer_token("Basic dXNlcg==") is None
    assert bearer_token("Bearer a b") is None
    assert bearer_token("Bearer") is None and bearer_token(None) is None


# -- the REST authorizer -------------------------------------------------------------------------
METHOD_ARN = "arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/POST/mcp"


def test_the_authorizer_allows_the_whole_api_and_names_its_default_audience() -> None:
    assert api_arn(METHOD_ARN) == "arn:aws:execute-api:eu-west-1:123456789012:abc123/v1/*/*"
    assert default_audience(METHOD_ARN) == "https://abc123.execute-api.eu-west-1.amazonaws.com/v1/mcp"


def test_the_authorizer_allows_denies_and_refuses_like_the_function(issuer: LocalIssuer) -> None:
    audience = default_audience(METHOD_ARN)
    settings = Settings(auth="jwt", auth_issuer=issuer.url, auth_scopes=("mcp:tools",))
    guard = guard_for(settings)
    assert isinstance(guard, BearerGuard)

    def decide(token: str) -> dict[str, Any]:
        event = {"type": "TOKEN", "authorizationToken": f"Bearer {token}", "methodArn": METHOD_ARN}
        return asyncio.run(authorize(guard, event))

    allowed = decide(issuer.token(audience, scope="mcp:tools other"))
    assert allowed["principalId"] == f"{issuer.url}#alice"
    assert allowed["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert allowed["policyDocument"]["Statement"][0]["Resource"] == api_arn(METHOD_ARN)
    assert allowed["context"] == {"principal": f"{issuer.url}#alice", "scope": "mcp:tools other"}
    denied = decide(issuer.token(audience, scope="other"))
    assert denied["policyDocument"]["Statement"][0]["Effect"] == "Deny"
    with pytest.raises(Unauthorized, match="^Unauthorized$"):
        decide(issuer.token("https://elsewhere.example.com/mcp"))
    with pytest.raises(Unauthorized):
        decide("not-a-token")


# -- the validator's key cache ----------------------------------------------------------------
def test_keys_are_fetched_once_and_an_unknown_kid_refetches_at_most_once_a_minute(
    issuer: LocalIssuer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetched: list[str] = []
    clock = [1000.0]

    def fetch(url: str, deadline: Any) -> dict[str, Any]:
        fetched.append(url)
        return issuer.jwks()

    keys = Issuer(issuer.url, fetch=fetch, metadata=lambda url, deadline: issuer.metadata(), clock=lambda: clock[0])
    validator = TokenValidator(keys)

    async def unknown(kid: str) -> None:
        with pytest.raises(TokenError, match="no key of the issuer matches"):
            await validator.validate(issuer.token("aud", key="foreign", kid=kid), "aud")

    async def run() -> None:
        for _ in range(3):
            identity = await validator.validate(issuer.token("aud"), "aud")
            assert identity.principal == f"{issuer.url}#alice"
        await validator.validate(issuer.token("aud", key="ec"), "aud")  # the other published key
        await unknown("new-1")
        assert len(fetched) == 1  # the keys were fetched less than a minute ago
        clock[0] += 61
        await unknown("new-2")
        await unknown("new-3")
        assert len(fetched) == 2  # one refetch a minute later, none for the next unknown kid
        await validator.validate(issuer.token("aud"), "aud")  # known keys never refetch

    asyncio.run(run())
    assert fetched == [f"{issuer.url}/jwks"] * 2


def test_cognito_access_tokens_are_accepted_by_client_id_without_an_audience(issuer: LocalIssuer) -> None:
    keys = Issuer(issuer.url, jwks_url=f"{issuer.url}/jwks", fetch=lambda url, deadline: issuer.jwks())
    validator = TokenValidator(keys, cognito_client_ids=["app-client"])

    async def check(**claims: Any) -> str:
        token = issuer.token(None, **claims)
        try:
            await validator.validate(token, "https://mcp.example.com/mcp")
        except TokenError as exc:
            return str(exc)
        return "ok"

    assert asyncio.run(check(client_id="app-client", token_use="access")) == "ok"
    assert asyncio.run(check(client_id="app-client", token_use="id")) == "the token is not an access token"
    assert "does not accept" in asyncio.run(check(client_id="other", token_use="access"))
