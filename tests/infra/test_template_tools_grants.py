"""template.yaml's grants for what the app's tools call (issue 39), offline: `ToolFunctionArns` (`app.lambda_tool`)
lets every function that runs tools (the HTTP function, the task worker with TaskBackend=sqs, the durable worker,
AgentCoreToolsFunction) invoke exactly those Lambda functions, each also under its versions and aliases, and
`ToolApiArns` (`app.openapi(..., auth="sigv4")`) call exactly those execute-api ARNs, and `ToolSecretArns` (the
`secretsmanager:...` and `ssm:...` credentials of `lambda_mcp.outbound`'s `bearer` and `Header`) read exactly those
secrets and parameters. Nothing else changes; empty, the default, grants nothing. Every combination is cfn-lint clean,
and `lambda-mcp check` refuses what CloudFormation would."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lambda_mcp.check import Deployment, load_template, problems
from tests.infra import templates
from tests.infra.templates import DURABLE_HANDLER, HTTP_HANDLER, TEMPLATE, WORKER_HANDLER, as_list, of_type

AGENTCORE_HANDLER = "lambda_mcp.entrypoints.agentcore.handler"
FUNCTIONS = [
    "arn:aws:lambda:us-east-1:123456789012:function:lookup-order",
    "arn:aws:lambda:eu-west-1:210987654321:function:billing_v2",
]
APIS = [
    "arn:aws:execute-api:eu-west-1:123456789012:abc123/*",
    "arn:aws:execute-api:us-east-1:123456789012:k3x9q2w7zv/prod/GET/pets/*",
]
SECRETS = [
    "arn:aws:secretsmanager:eu-west-1:123456789012:secret:vendor-token-AbCdEf",
    "arn:aws:ssm:eu-west-1:123456789012:parameter/billing/key",
    "arn:aws:secretsmanager:us-east-1:210987654321:secret:team/petstore_token-x1Y2z3",
    "arn:aws:ssm:us-east-1:123456789012:parameter/petstore-key",  # a name without a leading slash
]
LISTS = {"ToolFunctionArns": ",".join(FUNCTIONS), "ToolApiArns": ",".join(APIS), "ToolSecretArns": ",".join(SECRETS)}
INVOKE_FUNCTIONS = {"Effect": "Allow", "Action": ["lambda:InvokeFunction"]}
INVOKE_APIS = {"Effect": "Allow", "Action": ["execute-api:Invoke"]}
READ_SECRETS = {"Effect": "Allow", "Action": ["secretsmanager:GetSecretValue", "ssm:GetParameter"]}
"""Both actions over the one list: each matches only its own service's ARNs (the template's comment says why)."""
SIDS = {"ToolFunctionArns": "ToolFunctionsInvoke", "ToolApiArns": "ToolApisInvoke", "ToolSecretArns": "ToolSecretsRead"}


def _evaluate(node: Any, values: dict[str, str]) -> Any:
    """What CloudFormation computes of the grants' Resource (Ref, Fn::Split, Fn::Join, Fn::Sub with variables)."""
    if isinstance(node, dict) and len(node) == 1:
        ((function, args),) = node.items()
        if function == "Ref":
            return values[args]
        if function == "Fn::Split":
            return _evaluate(args[1], values).split(args[0])
        if function == "Fn::Join":
            return args[0].join(_evaluate(args[1], values))
        if function == "Fn::Sub":
            text, variables = args
            for name, value in variables.items():
                text = text.replace("${" + name + "}", _evaluate(value, values))
            assert "${" not in text, text
            return text
    assert not isinstance(node, dict), node
    return node


def _roles(cfn: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each role's inline policy statements."""
    return {
        name: [s for policy in role["Properties"].get("Policies", []) for s in policy["PolicyDocument"]["Statement"]]
        for name, role in of_type(cfn, "AWS::IAM::Role").items()
    }


def _role_of(cfn: dict[str, Any], handler: str) -> str:
    role, attribute = templates.function(cfn, handler)[1]["Role"]["Fn::GetAtt"]
    assert attribute == "Arn"
    return str(role)


def _running_tools(cfn: dict[str, Any], backend: str, agentcore: bool) -> set[str]:
    handlers = [HTTP_HANDLER, WORKER_HANDLER if backend == "sqs" else DURABLE_HANDLER]
    return {_role_of(cfn, handler) for handler in handlers + ([AGENTCORE_HANDLER] if agentcore else [])}


def test_the_parameters_are_empty_by_default_and_take_only_arns() -> None:
    parameters = templates.transformed()["Parameters"]
    assert {name: parameters[name]["Default"] for name in LISTS} == {name: "" for name in LISTS}
    accepts = {
        "ToolFunctionArns": (
            ["", FUNCTIONS[0], LISTS["ToolFunctionArns"], "arn:aws-cn:lambda:cn-north-1:123456789012:function:a"],
            [
                f"{FUNCTIONS[0]}:live",  # qualified: the grant already covers every alias and version
                f"{FUNCTIONS[0]}:3",
                "arn:aws:lambda:us-east-1:123456789012:function:*",
                "arn:aws:lambda:us-east-1:123456789012:function:lookup-*",
                f"{FUNCTIONS[0]}, {FUNCTIONS[1]}",  # a space would stay in the split ARN
                f"{FUNCTIONS[0]},",
                f",{FUNCTIONS[0]}",
                "lookup-order",  # a name: a policy needs the ARN
                "arn:aws:lambda:us-east-1:123456789012:layer:deps:3",
                APIS[0],
            ],
        ),
        "ToolApiArns": (
            ["", APIS[0], LISTS["ToolApiArns"], "arn:aws-us-gov:execute-api:us-gov-west-1:123456789012:abc/v1/POST/x"],
            [
                "arn:aws:execute-api:eu-west-1:123456789012:*",  # every API of the account
                "arn:aws:execute-api:eu-west-1:123456789012:*/*",
                "arn:aws:execute-api:eu-west-1:123456789012:abc123",  # no stage, method or path: matches nothing
                f"{APIS[0]}, {APIS[1]}",
                f"{APIS[0]},",
                FUNCTIONS[0],
            ],
        ),
        "ToolSecretArns": (
            [
                "",
                SECRETS[0],
                SECRETS[1],
                LISTS["ToolSecretArns"],
                "arn:aws-cn:secretsmanager:cn-north-1:123456789012:secret:a-AbCdEf",
                "arn:aws-us-gov:ssm:us-gov-west-1:123456789012:parameter/a/b.c_d-e",
            ],
            [
                "arn:aws:secretsmanager:eu-west-1:123456789012:secret:vendor-token",  # a partial ARN: no suffix
                "arn:aws:secretsmanager:eu-west-1:123456789012:secret:vendor-token-*",
                "arn:aws:secretsmanager:eu-west-1:123456789012:secret:*",
                "arn:aws:ssm:eu-west-1:123456789012:parameter/billing/*",
                "arn:aws:ssm:eu-west-1:123456789012:parameter/*",
                "arn:aws:ssm:eu-west-1:123456789012:parameter",
                "arn:aws:ssm:eu-west-1:123456789012:parameter//billing",
                f"{SECRETS[0]}, {SECRETS[1]}",
                f"{SECRETS[0]},",
                f",{SECRETS[1]}",
                "vendor-token",  # what the app names: a policy needs the ARN
                "ssm:/billing/key",
                "secretsmanager:vendor-token",
                "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
                FUNCTIONS[0],
            ],
        ),
    }
    for name, (good, bad) in accepts.items():
        pattern = re.compile(parameters[name]["AllowedPattern"])  # CloudFormation matches the whole value
        for value in good:
            assert pattern.fullmatch(value), (name, value)
        for value in bad:
            assert not pattern.fullmatch(value), (name, value)


@pytest.mark.parametrize(("backend", "agentcore"), [("sqs", False), ("sqs", True), ("durable", False)])
def test_every_function_running_tools_may_call_exactly_those_and_nothing_else_changes(
    backend: str, agentcore: bool, tmp_path: Path
) -> None:
    base = {"TaskBackend": backend, "AgentCoreLambdaTarget": "on" if agentcore else "off"}
    without, cfn = templates.deployed(**base), templates.deployed(**base, **LISTS)
    assert templates.findings(cfn, tmp_path) == []
    running = _running_tools(cfn, backend, agentcore)
    before, after = _roles(without), _roles(cfn)
    assert set(before) == set(after)
    for role, statements in after.items():
        new = [s for s in statements if s not in before[role]]
        assert [s for s in before[role] if s not in statements] == [], role  # nothing taken away
        if role not in running:  # the sweeper (TaskBackend=durable), the authorizer: nothing
            assert new == [], role
            continue
        by_sid = {s["Sid"]: s for s in new}
        assert sorted(by_sid) == ["ToolApisInvoke", "ToolFunctionsInvoke", "ToolSecretsRead"], role
        functions, apis = by_sid["ToolFunctionsInvoke"], by_sid["ToolApisInvoke"]
        assert {k: v for k, v in functions.items() if k not in ("Sid", "Resource")} == INVOKE_FUNCTIONS
        assert _evaluate(functions["Resource"], LISTS) == [*FUNCTIONS, *(f"{arn}:*" for arn in FUNCTIONS)]
        assert {k: v for k, v in apis.items() if k not in ("Sid", "Resource")} == INVOKE_APIS
        assert _evaluate(apis["Resource"], LISTS) == APIS
        secrets = by_sid["ToolSecretsRead"]
        assert {k: v for k, v in secrets.items() if k not in ("Sid", "Resource")} == READ_SECRETS
        assert _evaluate(secrets["Resource"], LISTS) == SECRETS
        assert "kms:" not in json.dumps(new), role  # aws/ssm's and Secrets Manager's own keys need no grant here
    # Nothing else of the stack differs: the same resources, and only those roles' policies changed.
    assert set(cfn["Resources"]) == set(without["Resources"])
    changed = {name for name in cfn["Resources"] if cfn["Resources"][name] != without["Resources"][name]}
    assert changed == running


@pytest.mark.parametrize("backend", ["sqs", "durable"])
def test_empty_lists_grant_nothing(backend: str, tmp_path: Path) -> None:
    cfn = templates.deployed(TaskBackend=backend, AgentCoreLambdaTarget="on")
    assert templates.findings(cfn, tmp_path) == []
    for role, statements in _roles(cfn).items():
        assert not [s for s in statements if str(s.get("Sid", "")).startswith("Tool")], role
        assert "execute-api:Invoke" not in json.dumps(statements), role
        assert "ssm:GetParameter" not in json.dumps(statements), role  # AuthMode=none: no facade parameters either
        read = [s for s in statements if "secretsmanager:GetSecretValue" in as_list(s["Action"])]
        assert [as_list(s["Resource"]) for s in read] in ([], [[{"Ref": "StateKeySecret"}]]), role  # the state key
        invoked = [s for s in statements if "lambda:InvokeFunction" in as_list(s["Action"])]
        assert [s["Sid"] for s in invoked] in ([], ["DurableTaskStart"]), role  # the kit's own durable worker only
    agentcore = cfn["Resources"][_role_of(cfn, AGENTCORE_HANDLER)]["Properties"]
    assert agentcore.get("Policies", []) == []  # no empty inline policy


@pytest.mark.parametrize("given", list(LISTS))
def test_one_list_grants_only_its_own_action(given: str, tmp_path: Path) -> None:
    cfn = templates.deployed(AgentCoreLambdaTarget="on", **{given: LISTS[given]})
    assert templates.findings(cfn, tmp_path) == []
    for role in _running_tools(cfn, "sqs", agentcore=True):
        sids = [s["Sid"] for s in _roles(cfn)[role] if s["Sid"].startswith("Tool")]
        assert sids == [SIDS[given]], role


@pytest.mark.parametrize("kind", ["secretsmanager", "ssm"])
def test_secrets_of_one_service_only_are_read_as_given(kind: str, tmp_path: Path) -> None:
    """Only secrets, or only parameters: the same statement, over exactly those ARNs, still cfn-lint clean (the other
    service's action matches none of them)."""
    arns = ",".join(arn for arn in SECRETS if arn.split(":")[2] == kind)
    cfn = templates.deployed(TaskBackend="durable", AgentCoreLambdaTarget="on", ToolSecretArns=arns)
    assert templates.findings(cfn, tmp_path) == []
    for role in _running_tools(cfn, "durable", agentcore=True):
        (read,) = [s for s in _roles(cfn)[role] if s["Sid"].startswith("Tool")]
        assert {k: v for k, v in read.items() if k not in ("Sid", "Resource")} == READ_SECRETS
        assert _evaluate(read["Resource"], {"ToolSecretArns": arns}) == arns.split(","), role


def test_the_uploaded_template_keeps_the_grants_conditional() -> None:
    """Every condition open (what `sam deploy` uploads; test_template.py lints it): the grants hang on the lists."""
    cfn = templates.transformed()
    assert cfn["Conditions"]["CallsToolFunctions"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "ToolFunctionArns"}, ""]}]}
    assert cfn["Conditions"]["CallsToolApis"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "ToolApiArns"}, ""]}]}
    assert cfn["Conditions"]["ReadsToolSecrets"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "ToolSecretArns"}, ""]}]}
    assert cfn["Conditions"]["CallsToolTargets"] == {
        "Fn::Or": [{"Condition": c} for c in ("CallsToolFunctions", "CallsToolApis", "ReadsToolSecrets")]
    }
    (policy,) = cfn["Resources"]["AgentCoreToolsFunctionRole"]["Properties"]["Policies"]
    condition, _, absent = policy["Fn::If"]
    assert (condition, absent) == ("CallsToolTargets", {"Ref": "AWS::NoValue"})


def test_check_refuses_what_cloudformation_would_and_passes_the_lists() -> None:
    template = load_template(TEMPLATE)

    def refused(**values: str) -> list[str]:
        return problems(template, Deployment(TEMPLATE, {"AuthMode": "none", **values}, "--parameter-overrides"))

    assert refused(**LISTS) == []
    (qualified,) = refused(ToolFunctionArns=f"{FUNCTIONS[0]}:live")
    assert qualified.startswith("ToolFunctionArns=") and "unqualified ARNs" in qualified
    (every_api,) = refused(ToolApiArns="arn:aws:execute-api:eu-west-1:123456789012:*")
    assert every_api.startswith("ToolApiArns=") and "execute-api ARNs" in every_api
    (partial,) = refused(ToolSecretArns="arn:aws:secretsmanager:eu-west-1:123456789012:secret:vendor-token")
    assert partial.startswith("ToolSecretArns=") and "full ARN" in partial
    (reference,) = refused(ToolSecretArns="ssm:/billing/key")
    assert reference.startswith("ToolSecretArns=") and "SSM parameter's ARN" in reference
