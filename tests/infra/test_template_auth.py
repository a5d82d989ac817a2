"""template.yaml's auth modes, offline: resolved and linted per AuthMode and ApiType (as CloudFormation would
deploy each: AWS::LanguageExtensions, the SAM transform, then the conditions), with what each mode must put in
front of the function."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.infra import templates
from tests.infra.templates import ISSUER, validate

HTTP_AUDIENCE, REST_AUDIENCE, URL_AUDIENCE = templates.HTTP_AUDIENCE, templates.REST_AUDIENCE, templates.URL_AUDIENCE
MODES = templates.AUTH_MODES
API_MODES = {key: values for key, values in MODES.items() if key[0] != "URL"}
# What each AuthMode sets LAMBDA_MCP_AUTH to: cognito and proxy serve the authorization facade.
KIT_AUTH = {
    "jwt": "jwt",
    "cognito": "proxy",
    "cognito-direct": "jwt",
    "proxy": "proxy",
    "iam": "gateway",
    "none": "none",
}
FACADE_PATHS = ("/.well-known/openid-configuration", "/oauth/{proxy+}")
COGNITO_ISSUER = "https://cognito-idp.${AWS::Region}.${AWS::URLSuffix}/${UserPool}"


@pytest.fixture(scope="module")
def cfn() -> dict[str, Any]:
    return templates.transformed()


def _values(api: str, mode: str) -> dict[str, str]:
    return {"ApiType": api, "AuthMode": mode, **MODES[(api, mode)]}


def _deployed(api: str, mode: str, tmp_path: Path) -> tuple[dict[str, Any], list[str]]:
    deployed = templates.deployed(**_values(api, mode))
    return deployed, templates.findings(deployed, tmp_path)


def _env(deployed: dict[str, Any], handler: str) -> dict[str, Any]:
    (function,) = [
        r["Properties"]
        for r in deployed["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function" and r["Properties"]["Handler"] == handler
    ]
    variables: dict[str, Any] = function["Environment"]["Variables"]
    return variables


def _api_body(deployed: dict[str, Any], api: str) -> dict[str, Any]:
    kind = "AWS::ApiGatewayV2::Api" if api == "HTTP" else "AWS::ApiGateway::RestApi"
    (found,) = [r["Properties"]["Body"] for r in deployed["Resources"].values() if r["Type"] == kind]
    body: dict[str, Any] = found
    return body


def test_the_auth_mode_has_no_default_so_a_public_endpoint_is_a_choice(cfn: dict[str, Any]) -> None:
    spec = cfn["Parameters"]["AuthMode"]
    assert "Default" not in spec
    assert spec["AllowedValues"] == ["jwt", "cognito", "cognito-direct", "proxy", "iam", "none"]


@pytest.mark.parametrize(("api", "mode"), list(MODES), ids=[f"{a}-{m}" for a, m in MODES])
def test_each_combination_passes_the_template_rules(cfn: dict[str, Any], api: str, mode: str) -> None:
    assert validate.broken_rules(cfn, _values(api, mode)) == []


@pytest.mark.parametrize(
    ("values", "broken"),
    [
        ({"AuthMode": "jwt", "AuthIssuer": ISSUER}, "AuthMode=jwt needs AuthAudience"),
        ({"AuthMode": "jwt", "AuthAudience": HTTP_AUDIENCE}, "AuthMode=jwt needs AuthIssuer"),
        (
            {"AuthMode": "cognito-direct", "ApiType": "REST"},
            "cognito-direct with ApiType=REST or URL needs AuthAudience",
        ),
        (
            {"AuthMode": "cognito-direct", "ApiType": "URL"},
            "cognito-direct with ApiType=REST or URL needs AuthAudience",
        ),
        ({"AuthMode": "cognito", "ApiType": "HTTP"}, "AuthMode=cognito or proxy needs AuthAudience"),
        ({"AuthMode": "cognito", "ApiType": "REST"}, "AuthMode=cognito or proxy needs AuthAudience"),
        ({"AuthMode": "proxy", **templates.UPSTREAM}, "AuthMode=cognito or proxy needs AuthAudience"),
        (
            {"AuthMode": "proxy", "AuthAudience": HTTP_AUDIENCE, "UpstreamClientId": "c"},
            "AuthMode=proxy needs UpstreamIssuer",
        ),
        (
            {"AuthMode": "proxy", "AuthAudience": HTTP_AUDIENCE, "UpstreamIssuer": "https://login.example.com"},
            "AuthMode=proxy needs UpstreamClientId",
        ),
    ],
)
def test_the_rules_refuse_a_mode_without_the_urls_it_needs(
    cfn: dict[str, Any], values: dict[str, str], broken: str
) -> None:
    (found,) = validate.broken_rules(cfn, values)
    assert broken in found


@pytest.mark.parametrize(("api", "mode"), list(API_MODES), ids=[f"{a}-{m}" for a, m in API_MODES])
def test_each_mode_deploys_lint_clean_with_its_authorizer_in_front(api: str, mode: str, tmp_path: Path) -> None:
    deployed, findings = _deployed(api, mode, tmp_path)
    assert findings == []
    body = _api_body(deployed, api)
    mcp = body["paths"]["/mcp"]["x-amazon-apigateway-any-method"]
    env = _env(deployed, "lambda_mcp.entrypoints.http.handler")
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        assert "security" not in body["paths"][path]["get"]  # discovery is never behind the authorizer
    # The facade's routes exist in its modes only, never behind an authorizer, on the same integration.
    facade = [body["paths"][path] for path in FACADE_PATHS if path in body["paths"]]
    assert len(facade) == (2 if mode in templates.FACADE_MODES else 0)
    for operations in facade:
        (operation,) = operations.values()
        assert "security" not in operation
        assert operation["x-amazon-apigateway-integration"]["uri"] == mcp["x-amazon-apigateway-integration"]["uri"]
    # A browser's CORS preflight reaches the kit in every mode: OPTIONS /mcp (a method route, which
    # beats ANY) has no authorizer, and invokes the same function as every other route.
    options = body["paths"]["/mcp"]["options"]
    assert "security" not in options and "security" not in body
    assert options["x-amazon-apigateway-integration"]["uri"] == mcp["x-amazon-apigateway-integration"]["uri"]
    assert options["x-amazon-apigateway-integration"]["type"] == "aws_proxy"
    types = {r["Type"] for r in deployed["Resources"].values()}
    assert ("AWS::Cognito::UserPool" in types) == (mode in ("cognito", "cognito-direct"))
    assert env["LAMBDA_MCP_AUTH"] == KIT_AUTH[mode]
    if mode == "none":
        assert mcp["security"] == []
        assert "PUBLIC ENDPOINT" in deployed["Outputs"]["AuthModeInUse"]["Value"]
        return
    if mode in templates.FACADE_MODES:  # the function checks the facade's own tokens (REST: its authorizer too)
        assert env["LAMBDA_MCP_AUTH_AUDIENCE"] == {"Ref": "AuthAudience"}
        if api != "REST":
            assert mcp["security"] == [] and "x-amazon-apigateway-gateway-responses" not in body
            return
    (scheme,) = mcp["security"][0]
    schemes = body["components"]["securitySchemes"] if api == "HTTP" else body["securityDefinitions"]
    if mode == "iam":
        assert schemes[scheme]["x-amazon-apigateway-authtype"] == "awsSigv4"
        return
    authorizer = schemes[scheme]["x-amazon-apigateway-authorizer"]
    if api == "HTTP":  # a JWT authorizer: bad tokens never invoke the function
        assert authorizer["type"] == "jwt" and authorizer["identitySource"] == "$request.header.Authorization"
        mapped = mcp["x-amazon-apigateway-integration"]["responseParameters"]
        for status in ("401", "403"):  # the function's challenge, back under its own name
            assert mapped[status] == {"overwrite:header.WWW-Authenticate": "$response.header.Lambda-Mcp-Challenge"}
    else:  # the authorizer answers for the function: its 401/403 carry the challenge
        assert authorizer["type"] == ("cognito_user_pools" if mode == "cognito-direct" else "token")
        # no cached decisions: an Allow cached past a token's expiry would let the function answer its 401,
        # whose challenge API Gateway renames (issue 21, finding 11)
        assert authorizer["authorizerResultTtlInSeconds"] == 0
        responses = body["x-amazon-apigateway-gateway-responses"]
        failures = {"AUTHORIZER_FAILURE", "AUTHORIZER_CONFIGURATION_ERROR"}
        assert set(responses) == {"UNAUTHORIZED", "ACCESS_DENIED", *failures}
        header = responses["UNAUTHORIZED"]["responseParameters"]["gatewayresponse.header.WWW-Authenticate"]
        assert "resource_metadata" in json.dumps(header)
        for failure in failures:  # an unreachable issuer: retry later, keep the token (finding 4)
            assert responses[failure]["statusCode"] == 503
            assert responses[failure]["responseParameters"] == {"gatewayresponse.header.Retry-After": "'15'"}
    if mode in templates.FACADE_MODES:
        assert _env(deployed, "lambda_mcp.entrypoints.authorizer.handler")["LAMBDA_MCP_AUTH"] == "proxy"
    elif mode == "jwt":
        assert env["LAMBDA_MCP_AUTH_ISSUER"] == {"Ref": "AuthIssuer"}
        assert env["LAMBDA_MCP_AUTH_AUDIENCE"] == {"Ref": "AuthAudience"}
        if api == "REST":
            authorizer_env = _env(deployed, "lambda_mcp.entrypoints.authorizer.handler")
            assert authorizer_env["LAMBDA_MCP_AUTH"] == "jwt"
            assert authorizer_env["LAMBDA_MCP_AUTH_AUDIENCE"] == {"Ref": "AuthAudience"}
    else:
        assert env["LAMBDA_MCP_AUTH_COGNITO_CLIENT_IDS"] == {"Ref": "UserPoolClient"}
        assert "cognito-idp" in json.dumps(env["LAMBDA_MCP_AUTH_ISSUER"])


@pytest.mark.parametrize("mode", ["jwt", "cognito", "cognito-direct", "proxy", "iam", "none"])
def test_a_function_url_replaces_api_gateway_and_the_function_checks_tokens(mode: str, tmp_path: Path) -> None:
    deployed, findings = _deployed("URL", mode, tmp_path)
    assert findings == []
    assert not [r for r in deployed["Resources"].values() if r["Type"].startswith("AWS::ApiGateway")]
    http_function, _ = templates.function(deployed, "lambda_mcp.entrypoints.http.handler")
    live, live_props = templates.alias(deployed, http_function)
    assert live_props["Name"] == "live"
    (url,) = templates.of_type(deployed, "AWS::Lambda::Url").values()
    assert url["Properties"] == {
        "TargetFunctionArn": {"Ref": live},
        "AuthType": "AWS_IAM" if mode == "iam" else "NONE",
        "InvokeMode": "BUFFERED",
    }
    permissions = [p["Properties"] for p in templates.of_type(deployed, "AWS::Lambda::Permission").values()]
    to_http = [p for p in permissions if p["FunctionName"] in ({"Ref": live}, {"Ref": http_function})]
    if mode == "iam":  # the callers' own IAM policies decide; no resource policy opens the URL
        assert to_http == []
    else:  # public: InvokeFunctionUrl, plus InvokeFunction limited to calls through the URL (since 2025-10)
        assert sorted(to_http, key=lambda p: p["Action"]) == [
            {
                "Action": "lambda:InvokeFunction",
                "FunctionName": {"Ref": live},
                "Principal": "*",
                "InvokedViaFunctionUrl": True,
            },
            {
                "Action": "lambda:InvokeFunctionUrl",
                "FunctionName": {"Ref": live},
                "Principal": "*",
                "FunctionUrlAuthType": "NONE",
            },
        ]
    assert deployed["Outputs"]["McpEndpoint"]["Value"] == {"Fn::Sub": "${McpFunctionUrl.FunctionUrl}mcp"}
    env = _env(deployed, "lambda_mcp.entrypoints.http.handler")
    assert env["LAMBDA_MCP_AUTH"] == KIT_AUTH[mode]
    issuers = {  # the issuer the function trusts (jwt), or the facade's upstream (cognito, proxy)
        "jwt": ("LAMBDA_MCP_AUTH_ISSUER", {"Ref": "AuthIssuer"}),
        "cognito": ("LAMBDA_MCP_AUTH_UPSTREAM_ISSUER", {"Fn::Sub": COGNITO_ISSUER}),
        "proxy": ("LAMBDA_MCP_AUTH_UPSTREAM_ISSUER", {"Ref": "UpstreamIssuer"}),
    }
    if mode in issuers:
        name, value = issuers[mode]
        assert env[name] == value
        assert env["LAMBDA_MCP_AUTH_AUDIENCE"] == {"Ref": "AuthAudience"}
    if mode == "cognito-direct":  # the function's canonical URL comes from AuthAudience (the rules require it)
        assert env["LAMBDA_MCP_RESOURCE_URL"] == {"Ref": "AuthAudience"}
        assert env["LAMBDA_MCP_AUTH_COGNITO_CLIENT_IDS"] == {"Ref": "UserPoolClient"}
    assert not templates.of_type(deployed, "AWS::Lambda::Function").keys() - {
        http_function,
        templates.function(deployed, templates.WORKER_HANDLER)[0],
    }  # no authorizer function


@pytest.mark.parametrize(
    "audience",
    [REST_AUDIENCE, "https://mcp.example.com/mcp", "https://api.example.com/tools/mcp"],
    ids=["execute-api", "mcp-host", "base-path"],
)
def test_the_rest_gateway_responses_name_the_metadata_url_the_function_serves(audience: str) -> None:
    values = {**MODES[("REST", "jwt")], "AuthAudience": audience}
    deployed = templates.deployed(ApiType="REST", AuthMode="jwt", **values)
    header = _api_body(deployed, "REST")["x-amazon-apigateway-gateway-responses"]["UNAUTHORIZED"]["responseParameters"]
    text = templates.evaluate(header["gatewayresponse.header.WWW-Authenticate"], {**values, "AuthScopes": "mcp:tools"})
    base = audience.removesuffix("/mcp")  # a host named mcp.example.com stays whole
    assert text == f'\'Bearer scope="mcp:tools", resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"\''
