"""template.yaml as CloudFormation would deploy it for given parameter values, through infra/validate_template.py:
the AWS::LanguageExtensions step (every `Fn::If` decided), the SAM transform, then conditions resolved."""

from __future__ import annotations

import copy
import functools
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from tests.support.processes import ROOT

_spec = importlib.util.spec_from_file_location("validate_template", ROOT / "infra/validate_template.py")
assert _spec is not None and _spec.loader is not None
validate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(validate)

TEMPLATE = ROOT / "template.yaml"
HTTP_HANDLER = "lambda_mcp.entrypoints.http.handler"
WORKER_HANDLER = "lambda_mcp.entrypoints.worker.handler"
AUTHORIZER_HANDLER = "lambda_mcp.entrypoints.authorizer.handler"
ISSUER = "https://issuer.example.com"
AUDIENCE = "https://mcp.example.com/mcp"


@functools.cache
def _deployed(items: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # the translator needs a region, never a call
    values = dict(items)
    resolved: dict[str, Any] = validate.resolve(validate.to_cloudformation(TEMPLATE, values), values)
    return resolved


@functools.cache
def _transformed() -> dict[str, Any]:
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    cfn: dict[str, Any] = validate.to_cloudformation(TEMPLATE)
    return cfn


def transformed() -> dict[str, Any]:
    """The SAM transform of the template as it is: every condition open, Parameters and Rules kept."""
    return copy.deepcopy(_transformed())


def deployed(**values: str) -> dict[str, Any]:
    """The resolved CloudFormation for these parameter values (AuthMode defaults to none here)."""
    values.setdefault("AuthMode", "none")
    return copy.deepcopy(_deployed(tuple(sorted(values.items()))))


def findings(cfn: dict[str, Any], tmp_path: Path) -> list[str]:
    """cfn-lint's findings on a resolved template (parameters other modes use may stay unused)."""
    path = tmp_path / "deployed.json"
    path.write_text(json.dumps(cfn))
    found: list[str] = validate.lint(path, ignore=("W2001",))
    return found


def of_type(cfn: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in cfn["Resources"].items() if r["Type"] == kind}


def function(cfn: dict[str, Any], handler: str) -> tuple[str, dict[str, Any]]:
    """The one function running `handler`: its logical id and properties."""
    ((name, props),) = [
        (name, f["Properties"])
        for name, f in of_type(cfn, "AWS::Lambda::Function").items()
        if f["Properties"]["Handler"] == handler
    ]
    return name, props


def env(cfn: dict[str, Any], handler: str) -> dict[str, Any]:
    variables: dict[str, Any] = function(cfn, handler)[1]["Environment"]["Variables"]
    return variables


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def statements(cfn: dict[str, Any], props: dict[str, Any]) -> list[dict[str, Any]]:
    """The inline policy statements of a function's execution role."""
    role_name, attribute = props["Role"]["Fn::GetAtt"]
    assert attribute == "Arn"
    role = cfn["Resources"][role_name]["Properties"]
    return [s for policy in role["Policies"] for s in policy["PolicyDocument"]["Statement"]]


def managed_policies(cfn: dict[str, Any], props: dict[str, Any]) -> list[str]:
    role_name, _ = props["Role"]["Fn::GetAtt"]
    arns = cfn["Resources"][role_name]["Properties"]["ManagedPolicyArns"]
    return [json.dumps(arn) for arn in arns]


def alias(cfn: dict[str, Any], function_name: str) -> tuple[str, dict[str, Any]]:
    """The one alias of a function: its logical id and properties."""
    ((name, props),) = [
        (name, a["Properties"])
        for name, a in of_type(cfn, "AWS::Lambda::Alias").items()
        if a["Properties"]["FunctionName"] == {"Ref": function_name}
    ]
    return name, props
