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

HTTP_AUDIENCE = "https://mcp.example.com/mcp"
REST_AUDIENCE = "https://abc123.execute-api.us-east-1.amazonaws.com/v1/mcp"
URL_AUDIENCE = "https://abc123.lambda-url.us-east-1.on.aws/mcp"
MODES = {
    ("HTTP", "jwt"): {"AuthIssuer": ISSUER, "AuthAudience": HTTP_AUDIENCE, "AuthScopes": "mcp:tools"},
    ("REST", "jwt"): {"AuthIssuer": ISSUER, "AuthAudience": REST_AUDIENCE, "AuthScopes": "mcp:tools"},
    ("URL", "jwt"): {"AuthIssuer": ISSUER, "AuthAudience": URL_AUDIENCE, "AuthScopes": "mcp:tools"},
    ("HTTP", "cognito"): {},
    ("REST", "cognito"): {"AuthAudience": REST_AUDIENCE},
    ("URL", "cognito"): {"AuthAudience": URL_AUDIENCE},
    ("HTTP", "iam"): {},
    ("REST", "iam"): {},
    ("URL", "iam"): {},
    ("HTTP", "none"): {},
    ("REST", "none"): {},
    ("URL", "none"): {},
}
API_MODES = {key: values for key, values in MODES.items() if key[0] != "URL"}


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
    assert "Default" not in spec and spec["AllowedValues"] == ["jwt", "cognito", "iam", "none"]


@pytest.mark.parametrize(("api", "mode"), list(MODES), ids=[f"{a}-{m}" for a, m in MODES])
def test_each_combination_passes_the_template_rules(cfn: dict[str, Any], api: str, mode: str) -> None:
    assert validate.broken_rules(cfn, _values(api, mode)) == []


@pytest.mark.parametrize(
    ("values", "broken"),
    [
        ({"AuthMode": "jwt", "AuthIssuer": ISSUER}, "AuthMode=jwt needs AuthAudience"),
        ({"AuthMode": "jwt", "AuthAudience": HTTP_AUDIENCE}, "AuthMode=jwt needs AuthIssuer"),
        ({"AuthMode": "cognito", "ApiType": "REST"}, "AuthMode=cognito with ApiType=REST or URL needs AuthAudience"),
        ({"AuthMode": "cognito", "ApiType": "URL"}, "AuthMode=cognito with ApiType=REST or URL needs AuthAudience"),
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
    # A browser's CORS preflight reaches the kit in every mode: OPTIONS /mcp (a method route, which
    # beats ANY) has no authorizer, and invokes the same function as every other route.
    options = body["paths"]["/mcp"]["options"]
    assert "security" not in options and "security" not in body
    assert options["x-amazon-apigateway-integration"]["uri"] == mcp["x-amazon-apigateway-integration"]["uri"]
    assert options["x-amazon-apigateway-integration"]["type"] == "aws_proxy"
    types = {r["Type"] for r in deployed["Resources"].values()}
    assert ("AWS::Cognito::UserPool" in types) == (mode == "cognito")
    assert env["LAMBDA_MCP_AUTH"] == {"jwt": "jwt", "cognito": "jwt", "iam": "gateway", "none": "none"}[mode]
    if mode == "none":
        assert mcp["security"] == []
        assert "PUBLIC ENDPOINT" in deployed["Outputs"]["AuthModeInUse"]["Value"]
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
        assert authorizer["type"] == ("token" if mode == "jwt" else "cognito_user_pools")
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
    if mode == "jwt":
        assert env["LAMBDA_MCP_AUTH_ISSUER"] == {"Ref": "AuthIssuer"}
        assert env["LAMBDA_MCP_AUTH_AUDIENCE"] == {"Ref": "AuthAudience"}
        if api == "REST":
            authorizer_env = _env(deployed, "lambda_mcp.entrypoints.authorizer.handler")
            assert authorizer_env["LAMBDA_MCP_AUTH"] == "jwt"
            assert authorizer_env["LAMBDA_MCP_AUTH_AUDIENCE"] == {"Ref": "AuthAudience"}
    else:
        assert env["LAMBDA_MCP_AUTH_COGNITO_CLIENT_IDS"] == {"Ref": "UserPoolClient"}
        assert "cognito-idp" in json.dumps(env["LAMBDA_MCP_AUTH_ISSUER"])


@pytest.mark.parametrize("mode", ["jwt", "cognito", "iam", "none"])
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
    assert env["LAMBDA_MCP_AUTH"] == {"jwt": "jwt", "cognito": "jwt", "iam": "gateway", "none": "none"}[mode]
    if mode == "jwt":
        assert env["LAMBDA_MCP_AUTH_ISSUER"] == {"Ref": "AuthIssuer"}
        assert env["LAMBDA_MCP_AUTH_AUDIENCE"] == {"Ref": "AuthAudience"}
    if mode == "cognito":  # the function's canonical URL comes from AuthAudience (the rules require it)
        assert env["LAMBDA_MCP_RESOURCE_URL"] == {"Ref": "AuthAudience"}
        assert env["LAMBDA_MCP_AUTH_COGNITO_CLIENT_IDS"] == {"Ref": "UserPoolClient"}
    assert not templates.of_type(deployed, "AWS::Lambda::Function").keys() - {
        http_function,
        templates.function(deployed, templates.WORKER_HANDLER)[0],
    }  # no authorizer function


def test_the_rest_gateway_responses_name_the_metadata_url_the_function_serves(tmp_path: Path) -> None:
    deployed, _ = _deployed("REST", "jwt", tmp_path)
    header = _api_body(deployed, "REST")["x-amazon-apigateway-gateway-responses"]["UNAUTHORIZED"]["responseParameters"]
    template, values = header["gatewayresponse.header.WWW-Authenticate"]["Fn::Sub"]
    base = REST_AUDIENCE.split("/mcp")[0]  # what Fn::Select/Fn::Split make of AuthAudience
    assert values["Base"] == {"Fn::Select": [0, {"Fn::Split": ["/mcp", {"Ref": "AuthAudience"}]}]}
    text = template.replace("${Base}", base).replace("${Scope}", 'scope="mcp:tools", ')
    assert text == f'\'Bearer scope="mcp:tools", resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"\''
