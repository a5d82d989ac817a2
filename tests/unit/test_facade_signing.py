"""The facade's signers (a local PEM key; a KMS ECC_NIST_P256 key, under moto) and its settings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jwt
import pytest

from lambda_mcp.auth.guard import guard_for
from lambda_mcp.config import ConfigError, Settings
from lambda_mcp.facade.signing import KmsSigner, LocalSigner, SigningError, der_to_jose, generate_pem, mint
from tests.unit.test_facade_http import PEM, RESOURCE, settings


def _verifies(signer: Any, token: str) -> dict[str, Any]:
    key = jwt.PyJWK(signer.public_jwk(), algorithm="ES256").key
    header = jwt.get_unverified_header(token)
    assert header == {"alg": "ES256", "kid": signer.public_jwk()["kid"], "typ": "at+jwt"}
    claims: dict[str, Any] = jwt.decode(token, key, algorithms=["ES256"], audience=RESOURCE)
    return claims


def test_a_local_key_signs_es256_tokens_with_a_thumbprint_kid() -> None:
    signer = LocalSigner(PEM)
    assert _verifies(signer, mint(signer, {"aud": RESOURCE, "sub": "a"}))["sub"] == "a"
    assert signer.public_jwk() == LocalSigner(PEM).public_jwk()  # the kid is the key's thumbprint
    assert signer.public_jwk()["kid"] != LocalSigner(generate_pem()).public_jwk()["kid"]
    assert "d" not in signer.public_jwk()


def test_a_pem_with_escaped_newlines_is_accepted_and_garbage_is_not() -> None:
    assert LocalSigner(PEM.replace("\n", "\\n")).public_jwk() == LocalSigner(PEM).public_jwk()
    with pytest.raises(SigningError):
        LocalSigner("not a key")


def test_der_signatures_become_fixed_size_r_and_s() -> None:
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    jose = der_to_jose(encode_dss_signature(1, 2**255))
    assert len(jose) == 64 and jose[:32] == (1).to_bytes(32, "big") and jose[32:] == (2**255).to_bytes(32, "big")


@pytest.fixture
def kms() -> Iterator[Any]:
    from moto import mock_aws

    with mock_aws():
        import boto3

        yield boto3.client("kms", region_name="us-east-1")


def test_a_kms_key_signs_through_the_kits_client(kms: Any) -> None:
    key = kms.create_key(KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["KeyId"]
    signer = KmsSigner(key)  # the kit's own botocore client (storage.aws_clients), built on first use
    token = mint(signer, {"aud": RESOURCE, "sub": "kms-user"})
    assert _verifies(signer, token)["sub"] == "kms-user"
    assert KmsSigner(key).public_jwk() == signer.public_jwk()


def test_a_kms_key_of_the_wrong_kind_or_missing_is_a_signing_error(kms: Any) -> None:
    rsa = kms.create_key(KeySpec="RSA_2048", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["KeyId"]
    with pytest.raises(SigningError, match="ECC_NIST_P256"):
        KmsSigner(rsa).public_jwk()
    with pytest.raises(SigningError, match="GetPublicKey"):
        KmsSigner("alias/missing").public_jwk()


async def _guarded(signer: Any, token: str) -> str:
    from lambda_mcp.facade.routes import Facade
    from lambda_mcp.storage.facade import InMemoryFacadeStore

    facade = Facade(settings(), InMemoryFacadeStore(), signer=signer)
    identity = await facade.guard.authenticate({"authorization": f"Bearer {token}"}, None, RESOURCE)
    assert identity is not None
    return identity.principal


@pytest.mark.anyio
async def test_mcp_accepts_tokens_signed_in_kms(kms: Any) -> None:
    import time

    key = kms.create_key(KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["KeyId"]
    signer = KmsSigner(key)
    now = int(time.time())
    claims = {
        "iss": "http://127.0.0.1:8000",
        "aud": RESOURCE,
        "sub": "k",
        "scope": "mcp:tools",
        "iat": now,
        "exp": now + 60,
    }
    token = mint(signer, claims)
    assert await _guarded(signer, token) == "http://127.0.0.1:8000#k"


# -- settings --------------------------------------------------------------------------------------------
def test_the_facade_is_the_issuer_of_its_resource() -> None:
    assert settings().auth_issuer == "http://127.0.0.1:8000"
    rest = settings(LAMBDA_MCP_AUTH_AUDIENCE="https://abc.execute-api.us-east-1.amazonaws.com/v1/mcp")
    assert rest.auth_issuer == "https://abc.execute-api.us-east-1.amazonaws.com/v1"
    key_id = settings(LAMBDA_MCP_AUTH_SIGNING_KEY="", LAMBDA_MCP_AUTH_SIGNING_KEY_ID="alias/facade")
    assert key_id.auth_signing_key_id == "alias/facade"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"LAMBDA_MCP_AUTH_AUDIENCE": ""}, "AUTH_AUDIENCE"),
        ({"LAMBDA_MCP_AUTH_AUDIENCE": "http://mcp.example.com/mcp"}, "AUTH_AUDIENCE"),
        ({"LAMBDA_MCP_AUTH_UPSTREAM_ISSUER": ""}, "AUTH_UPSTREAM_ISSUER"),
        ({"LAMBDA_MCP_AUTH_UPSTREAM_ISSUER": "http://idp.example.com"}, "AUTH_UPSTREAM_ISSUER"),
        ({"LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_ID": ""}, "AUTH_UPSTREAM_CLIENT_ID"),
        ({"LAMBDA_MCP_AUTH_SIGNING_KEY": ""}, "AUTH_SIGNING_KEY_ID"),
        ({"LAMBDA_MCP_AUTH_SIGNING_KEY_ID": "alias/k"}, "AUTH_SIGNING_KEY_ID"),
        ({"LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET_ARN": "arn:aws:secretsmanager:x"}, "CLIENT_SECRET_ARN"),
    ],
)
def test_incomplete_proxy_settings_name_what_is_missing(change: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        settings(**change)


def test_guard_for_never_fails_open_in_proxy_mode() -> None:
    with pytest.raises(ConfigError, match="proxy"):
        guard_for(settings())


def test_other_modes_do_not_import_the_facade() -> None:
    from tests.unit.test_package import _modules_after

    loaded = _modules_after(
        "from lambda_mcp.config import Settings; from lambda_mcp.kit import build_kit;"
        " from lambda_mcp.loader import load_app; settings = Settings.from_env({'LAMBDA_MCP_AUTH': 'none'});"
        " build_kit(load_app('tests/apps/scoped.py'), settings, streaming=False).asgi()"
    )
    assert not {m for m in loaded if m.startswith("lambda_mcp.facade")}
    assert not Settings.from_env({"LAMBDA_MCP_AUTH": "none"}).auth_upstream_issuer


@pytest.mark.anyio
async def test_the_rest_authorizer_checks_the_facades_tokens_in_proxy_mode() -> None:
    import time

    from lambda_mcp.auth.authorizer import Unauthorized, authorize
    from lambda_mcp.facade.resource_guard import token_guard

    guard = token_guard(settings())
    now = int(time.time())
    claims = {"iss": "http://127.0.0.1:8000", "aud": RESOURCE, "sub": "u", "scope": "mcp:tools"}
    event = {"methodArn": "arn:aws:execute-api:us-east-1:000000000000:api/v1/POST/mcp"}
    good = mint(LocalSigner(PEM), claims | {"iat": now, "exp": now + 60})
    decision = await authorize(guard, {**event, "authorizationToken": f"Bearer {good}"})
    assert decision["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert decision["principalId"] == "http://127.0.0.1:8000#u"
    forged = mint(LocalSigner(generate_pem()), claims | {"iat": now, "exp": now + 60})
    with pytest.raises(Unauthorized):
        await authorize(guard, {**event, "authorizationToken": f"Bearer {forged}"})


def test_in_proxy_mode_the_issuer_is_always_the_facade() -> None:
    assert settings(LAMBDA_MCP_AUTH_ISSUER="https://cognito-idp.example/pool").auth_issuer == "http://127.0.0.1:8000"


@pytest.mark.anyio
async def test_mcp_answers_503_when_kms_cannot_give_the_public_key(kms: Any) -> None:
    from lambda_mcp.auth.guard import Denied
    from lambda_mcp.facade.resource_guard import token_guard

    guard = token_guard(settings(), KmsSigner("alias/missing"))
    with pytest.raises(Denied) as refused:
        await guard.authenticate({"authorization": f"Bearer {mint(LocalSigner(PEM), {'sub': 'x'})}"}, None, RESOURCE)
    assert refused.value.status == 503 and refused.value.retry_after
