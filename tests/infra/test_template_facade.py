"""template.yaml's authorization facade (issue 26), offline: AuthMode=cognito (a user pool behind the facade),
proxy (any other OpenID provider) and cognito-direct (the user pool as before), as CloudFormation would deploy them
on every ApiType; checked against what the kit's own settings (lambda_mcp.config) require of the environment. The
lint of each combination is in test_template_auth (buffered) and test_template_streaming (streaming)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lambda_mcp.config import Settings, facade_issuer
from tests.infra import templates
from tests.infra.templates import (
    AUTH_MODES,
    AUTHORIZER_HANDLER,
    HTTP_HANDLER,
    UPSTREAM,
    UPSTREAM_SECRET,
    as_list,
    of_type,
)

APIS = ("HTTP", "REST", "URL")
COGNITO_ISSUER = "https://cognito-idp.${AWS::Region}.${AWS::URLSuffix}/${UserPool}"
FACADE_ENV = (
    "LAMBDA_MCP_AUTH_UPSTREAM_ISSUER",
    "LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_ID",
    "LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET_ARN",
    "LAMBDA_MCP_AUTH_SIGNING_KEY_ID",
)
# What CloudFormation would put where the deployed environment refers to resources (for lambda_mcp.config).
RESOLVED = {
    json.dumps({"Fn::Sub": COGNITO_ISSUER}): "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Abc123",
    json.dumps({"Ref": "UserPoolClient"}): "3n4b5urk1ft4fl3mg5e69nc1fs",
    json.dumps({"Ref": "UpstreamClientSecret"}): "arn:aws:secretsmanager:us-east-1:123456789012:secret:facade-AbCdEf",
    json.dumps({"Fn::GetAtt": ["FacadeSigningKey", "Arn"]}): "arn:aws:kms:us-east-1:123456789012:key/1234abcd",
    json.dumps({"Fn::GetAtt": ["ConnectionTokenKey", "Arn"]}): "arn:aws:kms:us-east-1:123456789012:key/5678efab",
}


def _values(api: str, mode: str, **more: str) -> dict[str, str]:
    return {"ApiType": api, "AuthMode": mode, **AUTH_MODES[(api, mode)], **more}


def _statements(cfn: dict[str, Any]) -> list[dict[str, Any]]:
    return templates.statements(cfn, templates.function(cfn, HTTP_HANDLER)[1])


def _settings(cfn: dict[str, Any], values: dict[str, str], handler: str = HTTP_HANDLER) -> Settings:
    """The kit's settings from a function's environment, references replaced by plausible values."""
    env = {}
    for name, value in templates.env(cfn, handler).items():
        if isinstance(value, str):
            env[name] = value
        elif json.dumps(value) in RESOLVED:
            env[name] = RESOLVED[json.dumps(value)]
        elif set(value) == {"Ref"} and value["Ref"] in values:
            env[name] = values[value["Ref"]]
    return Settings.from_env(env)


@pytest.mark.parametrize("api", APIS)
def test_cognito_puts_the_user_pool_behind_the_facade(api: str) -> None:
    values = _values(api, "cognito")
    cfn = templates.deployed(**values)
    env = templates.env(cfn, HTTP_HANDLER)
    assert env["LAMBDA_MCP_AUTH"] == "proxy"
    assert env["LAMBDA_MCP_AUTH_UPSTREAM_ISSUER"] == {"Fn::Sub": COGNITO_ISSUER}
    assert env["LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_ID"] == {"Ref": "UserPoolClient"}
    assert env["LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET_ARN"] == {"Ref": "UpstreamClientSecret"}
    assert env["LAMBDA_MCP_AUTH_SIGNING_KEY_ID"] == {"Fn::GetAtt": ["FacadeSigningKey", "Arn"]}
    # The facade is the issuer clients see: neither the user pool's issuer nor its client ids are trusted.
    assert "LAMBDA_MCP_AUTH_ISSUER" not in env and "LAMBDA_MCP_AUTH_COGNITO_CLIENT_IDS" not in env
    assert not [name for name in env if name.endswith("CLIENT_SECRET")]  # never the secret itself
    # The kit accepts this environment, and its facade's callback is the one the Cognito client allows.
    settings = _settings(cfn, values)
    callback = facade_issuer(settings) + "/oauth/callback"
    assert callback == AUTH_MODES[(api, "cognito")]["AuthAudience"].removesuffix("/mcp") + "/oauth/callback"
    client = cfn["Resources"]["UserPoolClient"]["Properties"]
    assert [templates.evaluate(url, values) for url in client["CallbackURLs"]] == [callback]
    assert client["GenerateSecret"] is True and client["AllowedOAuthFlows"] == ["code"]
    assert templates.evaluate(cfn["Outputs"]["FacadeCallbackUrl"]["Value"], values) == callback
    assert templates.evaluate(cfn["Outputs"]["AuthorizationServer"]["Value"], values) == facade_issuer(settings)
    # The client's secret goes from Cognito to Secrets Manager inside CloudFormation, and only the function reads it.
    secret = cfn["Resources"]["UpstreamClientSecret"]
    assert secret["Type"] == "AWS::SecretsManager::Secret"
    assert secret["Properties"]["SecretString"] == {"Fn::GetAtt": ["UserPoolClient", "ClientSecret"]}
    reads = [s for s in _statements(cfn) if "secretsmanager:GetSecretValue" in as_list(s["Action"])]
    assert sorted(json.dumps(s["Resource"]) for s in reads) == [
        json.dumps({"Ref": "StateKeySecret"}),
        json.dumps({"Ref": "UpstreamClientSecret"}),
    ]
    # Managed login: the domain in version 2, and Cognito's default style for the facade's client.
    domain = cfn["Resources"]["UserPoolDomain"]["Properties"]
    assert domain["ManagedLoginVersion"] == 2
    assert cfn["Resources"]["UserPool"]["Properties"]["UserPoolTier"] == "ESSENTIALS"  # managed login needs it
    (branding,) = of_type(cfn, "AWS::Cognito::ManagedLoginBranding").values()
    assert branding["Properties"] == {
        "UserPoolId": {"Ref": "UserPool"},
        "ClientId": {"Ref": "UserPoolClient"},
        "UseCognitoProvidedValues": True,
    }
    assert "CognitoClientId" not in cfn["Outputs"]  # no client id to paste into MCP clients any more


@pytest.mark.parametrize("api", APIS)
def test_proxy_fronts_any_openid_provider_with_the_parameters(api: str) -> None:
    values = _values(api, "proxy")
    cfn = templates.deployed(**values)
    env = templates.env(cfn, HTTP_HANDLER)
    assert env["LAMBDA_MCP_AUTH"] == "proxy"
    assert env["LAMBDA_MCP_AUTH_UPSTREAM_ISSUER"] == {"Ref": "UpstreamIssuer"}
    assert env["LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_ID"] == {"Ref": "UpstreamClientId"}
    assert not of_type(cfn, "AWS::Cognito::UserPool") and "UpstreamClientSecret" not in cfn["Resources"]
    settings = _settings(cfn, values)
    assert settings.auth_upstream_issuer == UPSTREAM["UpstreamIssuer"]
    reads = [s for s in _statements(cfn) if "secretsmanager:GetSecretValue" in as_list(s["Action"])]
    if "UpstreamClientSecretArn" in values:  # a confidential client: its secret, by the ARN given
        assert env["LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET_ARN"] == {"Ref": "UpstreamClientSecretArn"}
        assert settings.auth_upstream_client_secret_arn == UPSTREAM_SECRET
        assert len(reads) == 2 and {"Ref": "UpstreamClientSecretArn"} in [s["Resource"] for s in reads]
    else:  # a public client: no secret to read
        assert "LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET_ARN" not in env
        assert [s["Resource"] for s in reads] == [{"Ref": "StateKeySecret"}]


@pytest.mark.parametrize("mode", templates.FACADE_MODES)
def test_the_facade_signs_with_a_kms_key_and_deletes_only_its_own_rows(mode: str) -> None:
    cfn = templates.deployed(**_values("REST", mode), Stage="production")
    key = cfn["Resources"]["FacadeSigningKey"]
    assert key["Properties"]["KeySpec"] == "ECC_NIST_P256" and key["Properties"]["KeyUsage"] == "SIGN_VERIFY"
    assert (key["DeletionPolicy"], key["UpdateReplacePolicy"]) == ("Retain", "Retain")  # production keeps it
    statements = _statements(cfn)
    # the signing key's two actions; the token key's (test_template_connections) are another statement's
    (signing,) = [s for s in statements if "kms:Sign" in as_list(s["Action"])]
    assert sorted(as_list(signing["Action"])) == ["kms:GetPublicKey", "kms:Sign"]
    assert signing["Resource"] == {"Fn::GetAtt": ["FacadeSigningKey", "Arn"]}
    (delete,) = [s for s in statements if "dynamodb:DeleteItem" in as_list(s["Action"])]
    assert as_list(delete["Action"]) == ["dynamodb:DeleteItem"]
    assert delete["Condition"] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["FACADE#*"]}}
    for statement in statements:  # least privilege, as test_template.test_iam_is_least_privilege checks
        assert not any("*" in a for a in as_list(statement["Action"])), statement
        assert "*" not in json.dumps(statement["Resource"]).replace("/index/*", "")
    assert templates.deployed(**_values("REST", mode))["Resources"]["FacadeSigningKey"]["DeletionPolicy"] == "Delete"


@pytest.mark.parametrize(
    ("mode", "transport"), [("cognito", "buffered"), ("cognito", "streaming"), ("proxy", "buffered")]
)
def test_on_rest_the_facade_routes_are_open_and_mcp_is_behind_the_facade_token_authorizer(
    mode: str, transport: str
) -> None:
    """The facade's own routes reach the function with no authorizer; /mcp has the kit's token authorizer, which
    checks the facade's tokens (not the upstream's), so a request without one gets API Gateway's 401 with the
    challenge (a function's own WWW-Authenticate would be renamed on the REST API)."""
    values = _values("REST", mode)
    cfn = templates.deployed(**values, Transport=transport)
    (rest,) = of_type(cfn, "AWS::ApiGateway::RestApi").values()
    body = rest["Properties"]["Body"]
    paths = body["paths"]
    mcp = paths["/mcp"]["x-amazon-apigateway-any-method"]
    facade = paths["/oauth/{proxy+}"]["x-amazon-apigateway-any-method"]
    assert facade["parameters"] == [{"name": "proxy", "in": "path", "required": True, "type": "string"}]
    discovery = paths["/.well-known/openid-configuration"]["get"]
    assert mcp["security"] == [{"token": []}]
    for operation in (facade, discovery):
        assert "security" not in operation or operation["security"] == []
        # the same function and, streaming, the same STREAM transfer mode as /mcp
        assert operation["x-amazon-apigateway-integration"] == mcp["x-amazon-apigateway-integration"]
    assert ("responseTransferMode" in facade["x-amazon-apigateway-integration"]) == (transport == "streaming")
    assert "UNAUTHORIZED" in body["x-amazon-apigateway-gateway-responses"]
    settings = _settings(cfn, values, AUTHORIZER_HANDLER)  # what the authorizer's import checks
    assert (
        settings.auth == "proxy"
        and settings.auth_signing_key_id == RESOLVED[json.dumps({"Fn::GetAtt": ["FacadeSigningKey", "Arn"]})]
    )
    assert "LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET_ARN" not in templates.env(cfn, AUTHORIZER_HANDLER)  # never needed
    role = templates.function(cfn, AUTHORIZER_HANDLER)[1]
    (statement,) = templates.statements(cfn, role)
    assert as_list(statement["Action"]) == ["kms:GetPublicKey"]
    assert statement["Resource"] == {"Fn::GetAtt": ["FacadeSigningKey", "Arn"]}


def test_cognito_direct_keeps_the_user_pool_as_the_authorization_server() -> None:
    values = _values("REST", "cognito-direct")
    cfn = templates.deployed(**values)
    env = templates.env(cfn, HTTP_HANDLER)
    assert env["LAMBDA_MCP_AUTH"] == "jwt" and env["LAMBDA_MCP_AUTH_ISSUER"] == {"Fn::Sub": COGNITO_ISSUER}
    assert env["LAMBDA_MCP_AUTH_COGNITO_CLIENT_IDS"] == {"Ref": "UserPoolClient"}
    assert not [name for name in env if name in FACADE_ENV]
    client = cfn["Resources"]["UserPoolClient"]["Properties"]
    assert client["GenerateSecret"] is False and client["CallbackURLs"] == {"Ref": "CognitoCallbackUrls"}
    assert "ManagedLoginVersion" not in cfn["Resources"]["UserPoolDomain"]["Properties"]
    assert "UserPoolTier" not in cfn["Resources"]["UserPool"]["Properties"]
    for name in ("FacadeSigningKey", "UpstreamClientSecret", "UserPoolManagedLoginBranding"):
        assert name not in cfn["Resources"]
    assert set(cfn["Outputs"]) >= {"CognitoClientId", "CognitoIssuer", "CognitoUserPoolId"}
    assert not {"AuthorizationServer", "FacadeCallbackUrl", "CognitoFacadeClientId"} & set(cfn["Outputs"])
    assert _settings(cfn, values).auth == "jwt"


@pytest.mark.parametrize("mode", ["cognito", "proxy"])
def test_who_may_sign_in_and_the_copied_claims_reach_the_facade_as_settings(mode: str) -> None:
    values = _values("HTTP", mode, FacadeRequire="hd=example.com,email_verified=true", FacadeClaims="email,groups")
    cfn = templates.deployed(**values)
    settings = _settings(cfn, values)
    assert settings.auth_upstream_require == (("hd", "example.com"), ("email_verified", "true"))
    assert settings.auth_upstream_claims == ("email", "groups")
    unset = _settings(templates.deployed(**_values("HTTP", mode)), _values("HTTP", mode))
    assert unset.auth_upstream_require == () and unset.auth_upstream_claims == ()


def test_the_facade_parameters_take_only_what_the_settings_can_read() -> None:
    import re

    parameters = templates.transformed()["Parameters"]
    require = re.compile(parameters["FacadeRequire"]["AllowedPattern"])
    claims = re.compile(parameters["FacadeClaims"]["AllowedPattern"])
    for good in ("", "hd=example.com", "email_verified=true,cognito:groups=staff"):
        assert require.fullmatch(good), good
    for bad in ("hd", "hd=", "=x", "a=b,", "a b=c", "a=b=c"):
        assert not require.fullmatch(bad), bad
    for good in ("", "email", "email,groups,cognito:groups"):
        assert claims.fullmatch(good), good
    for bad in (",", "email,", "a b"):
        assert not claims.fullmatch(bad), bad
