"""template.yaml behind an Amazon Bedrock AgentCore gateway (issue 38), offline: with AuthMode=iam the outputs
say what to sign for and what the gateway's role must be allowed to invoke, and `AgentCoreGatewayRoleArn` lets
that role (another account's too) call the IAM-authenticated Function URL, through the URL only; nothing
of it in other modes; every combination lint clean."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.infra import templates

ROLE = "arn:aws:iam::210987654321:role/agentcore-gateway"


def test_the_role_parameter_takes_only_an_iam_role_arn() -> None:
    pattern = re.compile(templates.transformed()["Parameters"]["AgentCoreGatewayRoleArn"]["AllowedPattern"])
    for good in ("", ROLE, "arn:aws-cn:iam::123456789012:role/path/to/r"):
        assert pattern.fullmatch(good), good
    for bad in ("arn:aws:iam::123456789012:user/u", "agentcore-gateway", "arn:aws:iam::1:role/r", f"{ROLE}*"):
        assert not pattern.fullmatch(bad), bad


@pytest.mark.parametrize(("api", "service"), [("URL", "lambda"), ("REST", "execute-api"), ("HTTP", "execute-api")])
def test_with_iam_the_outputs_name_the_service_and_what_to_allow(api: str, service: str, tmp_path: Path) -> None:
    cfn = templates.deployed(ApiType=api, AuthMode="iam")
    outputs = cfn["Outputs"]
    assert outputs["AgentCoreSigningService"]["Value"] == service
    allowed = str(outputs["AgentCoreInvokeResource"]["Value"])
    assert ("execute-api" in allowed) == (service == "execute-api"), allowed
    assert not templates.of_type(cfn, "AWS::Lambda::Permission").keys() & {
        "AgentCoreGatewayUrlPermission",
        "AgentCoreGatewayInvokePermission",
    }
    assert templates.findings(cfn, tmp_path) == []


def test_the_gateway_role_may_call_the_iam_function_url_and_only_through_it(tmp_path: Path) -> None:
    cfn = templates.deployed(ApiType="URL", AuthMode="iam", AgentCoreGatewayRoleArn=ROLE)
    permissions = templates.of_type(cfn, "AWS::Lambda::Permission")
    url, invoke = (
        permissions[name]["Properties"]
        for name in ("AgentCoreGatewayUrlPermission", "AgentCoreGatewayInvokePermission")
    )
    role = {"Ref": "AgentCoreGatewayRoleArn"}  # the parameter, as CloudFormation resolves it at deploy
    assert (url["Action"], url["Principal"], url["FunctionUrlAuthType"]) == (
        "lambda:InvokeFunctionUrl",
        role,
        "AWS_IAM",
    )
    assert (invoke["Action"], invoke["Principal"], invoke["InvokedViaFunctionUrl"]) == (
        "lambda:InvokeFunction",
        role,
        True,
    )
    assert templates.findings(cfn, tmp_path) == []


@pytest.mark.parametrize(("api", "mode"), [("URL", "none"), ("REST", "iam"), ("HTTP", "none")])
def test_the_role_grants_nothing_without_an_iam_function_url(api: str, mode: str, tmp_path: Path) -> None:
    cfn = templates.deployed(ApiType=api, AuthMode=mode, AgentCoreGatewayRoleArn=ROLE)
    assert "AgentCoreGatewayUrlPermission" not in cfn["Resources"]
    assert ("AgentCoreSigningService" in cfn["Outputs"]) == (mode == "iam")
    assert templates.findings(cfn, tmp_path) == []


@pytest.mark.parametrize("role", ["", ROLE])
def test_the_lambda_target_function_is_deployed_on_request_and_the_gateway_may_invoke_it(
    role: str, tmp_path: Path
) -> None:
    assert "AgentCoreToolsFunction" not in templates.deployed(ApiType="HTTP")["Resources"]
    cfn = templates.deployed(ApiType="HTTP", AgentCoreLambdaTarget="on", AgentCoreGatewayRoleArn=role)
    name, props = templates.function(cfn, "lambda_mcp.entrypoints.agentcore.handler")
    assert name == "AgentCoreToolsFunction" and props["Environment"]["Variables"]["LAMBDA_MCP_APP"]
    permission = cfn["Resources"].get("AgentCoreToolsInvokePermission")
    if role:
        assert permission["Properties"]["Action"] == "lambda:InvokeFunction"
        assert permission["Properties"]["Principal"] == {"Ref": "AgentCoreGatewayRoleArn"}
    else:
        assert permission is None
    assert "AgentCoreToolsFunctionArn" in cfn["Outputs"]
    assert templates.findings(cfn, tmp_path) == []


def test_check_warns_when_sessions_end_before_the_gateway_forgets_them() -> None:
    from lambda_mcp.check_warnings import warnings

    template = templates.transformed()
    short = warnings(template, {"AuthMode": "iam", "AgentCoreGatewayRoleArn": ROLE, "SessionTtlSeconds": "900"})
    assert any("SessionTtlSeconds=900" in line and "AgentCore gateway" in line for line in short), short
    assert warnings(template, {"AuthMode": "iam", "AgentCoreGatewayRoleArn": ROLE}) == []  # 3,600 covers the default
    assert warnings(template, {"AuthMode": "iam", "SessionTtlSeconds": "900"}) == []  # no gateway named
