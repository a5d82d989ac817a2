"""template.yaml, checked offline: translated by aws-sam-translator, then linted by cfn-lint (infra/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lambda_mcp.storage.dynamodb import keys
from lambda_mcp.storage.dynamodb.table import TABLE_DEFINITION
from tests.support.processes import ROOT

VALIDATE = ROOT / "infra/validate_template.py"


def _validate(template: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(VALIDATE), str(template), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def cfn(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("cfn") / "template.cfn.json"
    done = _validate(ROOT / "template.yaml", out)
    print("\n" + done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("0 findings")
    loaded: dict[str, Any] = json.loads(out.read_text())
    return loaded


def _of_type(cfn: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in cfn["Resources"].items() if r["Type"] == kind}


def test_the_function_runs_the_kit_handler_on_arm64_python313_with_the_layer(cfn: dict[str, Any]) -> None:
    (function,) = _of_type(cfn, "AWS::Lambda::Function").values()
    props = function["Properties"]
    assert props["Handler"] == "lambda_mcp.entrypoints.http.handler"
    assert props["Runtime"] == "python3.13" and props["Architectures"] == ["arm64"]
    ((layer_name,),) = [list(ref.values()) for ref in props["Layers"]]
    assert layer_name.startswith("DepsLayer")  # SAM suffixes a content hash
    env = props["Environment"]["Variables"]
    assert env["LAMBDA_MCP_APP"] == {"Ref": "AppPath"}
    assert env["LAMBDA_MCP_TABLE_NAME"] == {"Ref": "StateTable"}
    assert "LAMBDA_MCP_STATE_KEY" in env
    assert props["Timeout"] <= 30  # never outlives the API Gateway integration timeout
    layer = cfn["Resources"][layer_name]["Properties"]
    assert layer["CompatibleArchitectures"] == ["arm64"] and layer["CompatibleRuntimes"] == ["python3.13"]


def test_http_api_is_the_default_and_rest_is_an_option(cfn: dict[str, Any]) -> None:
    assert cfn["Parameters"]["ApiType"]["Default"] == "HTTP"
    (http,) = _of_type(cfn, "AWS::ApiGatewayV2::Api").values()
    assert http["Condition"] == "UseHttpApi" and http["Properties"]["ProtocolType"] == "HTTP"
    (rest,) = _of_type(cfn, "AWS::ApiGateway::RestApi").values()
    assert rest["Condition"] == "UseRestApi"
    permissions = _of_type(cfn, "AWS::Lambda::Permission")
    assert {p["Condition"] for p in permissions.values()} == {"UseHttpApi", "UseRestApi"}
    assert set(cfn["Outputs"]) >= {"McpEndpoint", "StateTableName"}


def test_the_table_matches_the_kit_definition_and_has_ttl(cfn: dict[str, Any]) -> None:
    (table,) = _of_type(cfn, "AWS::DynamoDB::Table").values()
    props = table["Properties"]
    for key in ("AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes", "BillingMode"):
        assert props[key] == TABLE_DEFINITION[key], key
    assert props["TimeToLiveSpecification"] == {"AttributeName": keys.EXPIRES_AT, "Enabled": True}


def test_iam_is_least_privilege(cfn: dict[str, Any]) -> None:
    (role,) = _of_type(cfn, "AWS::IAM::Role").values()
    statements = [s for policy in role["Properties"]["Policies"] for s in policy["PolicyDocument"]["Statement"]]
    actions = {a for s in statements for a in s["Action"]}
    assert actions == {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query"}
    for statement in statements:
        assert "*" not in json.dumps(statement["Resource"]).replace("/index/*", "")
    managed = role["Properties"]["ManagedPolicyArns"]
    assert [json.dumps(m) for m in managed] == [
        json.dumps(m) for m in managed if "AWSLambdaBasicExecutionRole" in str(m)
    ]


def test_the_validator_catches_bugs_that_only_show_after_the_transform(tmp_path: Path) -> None:
    bad = tmp_path / "template.yaml"
    text = (ROOT / "template.yaml").read_text()
    bad.write_text(text.replace("Runtime: python3.13", "Runtime: python3.99").replace("Timeout: 29", "Timeout: 1200"))
    done = _validate(bad, tmp_path / "out.json")
    assert done.returncode == 1
    assert "E3030" in done.stdout and "E3717" in done.stdout
