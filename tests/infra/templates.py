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
DURABLE_HANDLER = "lambda_mcp.entrypoints.durable_worker.handler"
"""TaskBackend=durable's worker (the module need not exist for the template's checks or `sam build`)."""
AUTHORIZER_HANDLER = "lambda_mcp.entrypoints.authorizer.handler"
ISSUER = "https://issuer.example.com"
AUDIENCE = "https://mcp.example.com/mcp"
HTTP_AUDIENCE = "https://mcp.example.com/mcp"
REST_AUDIENCE = "https://abc123.execute-api.us-east-1.amazonaws.com/v1/mcp"
URL_AUDIENCE = "https://abc123.lambda-url.us-east-1.on.aws/mcp"
UPSTREAM = {"UpstreamIssuer": "https://login.example.com/tenant/v2.0", "UpstreamClientId": "facade-client"}
UPSTREAM_SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:upstream-client-AbCdEf"
FACADE_MODES = ("cognito", "proxy")
"""The AuthModes whose function serves the authorization facade (LAMBDA_MCP_AUTH=proxy)."""
AUTH_MODES: dict[tuple[str, str], dict[str, str]] = {
    ("HTTP", "jwt"): {"AuthIssuer": ISSUER, "AuthAudience": HTTP_AUDIENCE, "AuthScopes": "mcp:tools"},
    ("REST", "jwt"): {"AuthIssuer": ISSUER, "AuthAudience": REST_AUDIENCE, "AuthScopes": "mcp:tools"},
    ("URL", "jwt"): {"AuthIssuer": ISSUER, "AuthAudience": URL_AUDIENCE, "AuthScopes": "mcp:tools"},
    ("HTTP", "cognito"): {"AuthAudience": HTTP_AUDIENCE},
    ("REST", "cognito"): {"AuthAudience": REST_AUDIENCE},
    ("URL", "cognito"): {"AuthAudience": URL_AUDIENCE},
    ("HTTP", "cognito-direct"): {},
    ("REST", "cognito-direct"): {"AuthAudience": REST_AUDIENCE},
    ("URL", "cognito-direct"): {"AuthAudience": URL_AUDIENCE},
    ("HTTP", "proxy"): {"AuthAudience": HTTP_AUDIENCE, **UPSTREAM},
    ("REST", "proxy"): {"AuthAudience": REST_AUDIENCE, **UPSTREAM, "UpstreamClientSecretArn": UPSTREAM_SECRET},
    ("URL", "proxy"): {"AuthAudience": URL_AUDIENCE, **UPSTREAM},
    ("HTTP", "iam"): {},
    ("REST", "iam"): {},
    ("URL", "iam"): {},
    ("HTTP", "none"): {},
    ("REST", "none"): {},
    ("URL", "none"): {},
}
"""(ApiType, AuthMode) -> the other parameters that combination needs (test_template_auth, test_template_streaming)."""


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


def evaluate(node: Any, parameters: dict[str, str]) -> Any:
    """A value the template builds from parameters (Ref, Fn::Select, Fn::Split, Fn::If on HasAuthScopes, Fn::Sub
    with or without variables), as CloudFormation would compute it."""
    if isinstance(node, dict) and len(node) == 1:
        ((function, args),) = node.items()
        if function == "Ref":
            return parameters[args]
        if function == "Fn::Select":
            return evaluate(args[1], parameters)[args[0]]
        if function == "Fn::Split":
            return evaluate(args[1], parameters).split(args[0])
        if function == "Fn::If" and args[0] == "HasAuthScopes":
            return evaluate(args[1] if parameters.get("AuthScopes") else args[2], parameters)
        if function == "Fn::Sub":
            text, variables = (args, {}) if isinstance(args, str) else args
            for name, value in {**parameters, **variables}.items():
                text = text.replace("${" + name + "}", evaluate(value, parameters))
            return text
    return node
