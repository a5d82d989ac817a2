"""template.yaml's auth modes, offline: transformed once, then resolved and linted per AuthMode and ApiType
(as CloudFormation would deploy each), with what each mode must put in front of the function."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import ROOT

_spec = importlib.util.spec_from_file_location("validate_template", ROOT / "infra/validate_template.py")
assert _spec is not None and _spec.loader is not None
validate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(validate)

ISSUER = "https://issuer.example.com"
HTTP_AUDIENCE = "https://mcp.example.com/mcp"
REST_AUDIENCE = "https://abc123.execute-api.us-east-1.amazonaws.com/v1/mcp"
MODES = {
    ("HTTP", "jwt"): {"AuthIssuer": ISSUER, "AuthAudience": HTTP_AUDIENCE, "AuthScopes": "mcp:tools"},
    ("REST", "jwt"): {"AuthIssuer": ISSUER, "AuthAudience": REST_AUDIENCE, "AuthScopes": "mcp:tools"},
    ("HTTP", "cognito"): {},
    ("REST", "cognito"): {"AuthAudience": REST_AUDIENCE},
    ("HTTP", "iam"): {},
    ("REST", "iam"): {},
    ("HTTP", "none"): {},
    ("REST", "none"): {},
}


@pytest.fixture(scope="module")
def cfn() -> dict[str, Any]:
    import os

    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    transformed: dict[str, Any] = validate.to_cloudformation(ROOT / "template.yaml")
    return transformed


def _deployed(cfn: dict[str, Any], api: str, mode: str, tmp_path: Path) -> tuple[dict[str, Any], list[str]]:
    deployed: dict[str, Any] = validate.resolve(cfn, {"ApiType": api, "AuthMode": mode, **MODES[(api, mode)]})
    path = tmp_path / "deployed.json"
    path.write_text(json.dumps(deployed))
    return deployed, validate.lint(path, ignore=("W2001",))


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
def test_each_mode_deploys_lint_clean_with_its_authorizer_in_front(
    cfn: dict[str, Any], api: str, mode: str, tmp_path: Path
) -> None:
    deployed, findings = _deployed(cfn, api, mode, tmp_path)
    assert findings == []
    body = _api_body(deployed, api)
    mcp = body["paths"]["/mcp"]["x-amazon-apigateway-any-method"]
    env = _env(deployed, "lambda_mcp.entrypoints.http.handler")
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        assert "security" not in body["paths"][path]["get"]  # discovery is never behind the authorizer
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
        responses = body["x-amazon-apigateway-gateway-responses"]
        assert set(responses) == {"UNAUTHORIZED", "ACCESS_DENIED"}
        header = responses["UNAUTHORIZED"]["responseParameters"]["gatewayresponse.header.WWW-Authenticate"]
        assert "resource_metadata" in json.dumps(header)
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


def test_the_rest_gateway_responses_name_the_metadata_url_the_function_serves(
    cfn: dict[str, Any], tmp_path: Path
) -> None:
    deployed, _ = _deployed(cfn, "REST", "jwt", tmp_path)
    header = _api_body(deployed, "REST")["x-amazon-apigateway-gateway-responses"]["UNAUTHORIZED"]["responseParameters"]
    template, values = header["gatewayresponse.header.WWW-Authenticate"]["Fn::Sub"]
    base = REST_AUDIENCE.split("/mcp")[0]  # what Fn::Select/Fn::Split make of AuthAudience
    assert values["Base"] == {"Fn::Select": [0, {"Fn::Split": ["/mcp", {"Ref": "AuthAudience"}]}]}
    text = template.replace("${Base}", base).replace("${Scope}", 'scope="mcp:tools", ')
    assert text == f'\'Bearer scope="mcp:tools", resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"\''
