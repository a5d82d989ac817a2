"""template.yaml's identity for agents and enterprises (issue 36), offline: where the operator clients document is
(`AuthClientsParameter`, an SSM parameter, or `AuthClientsSecretArn`, a secret; a rule refuses both), the
enterprise issuers trusted (`AuthTrustedIssuers`) and DPoP (`AuthDpop`, `AuthDpopNonce`), as CloudFormation would
deploy them: the settings the function gets (read back by lambda_mcp.config), a read of exactly that parameter or
that secret and nothing when unset or without the facade, every combination lint clean; and the facade's replay
caches written with the TTL attribute the table expires items by."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from lambda_mcp.check import Deployment, load_template, problems
from lambda_mcp.config import Settings
from tests.infra import templates
from tests.infra.templates import AUTH_MODES, AUTHORIZER_HANDLER, FACADE_MODES, HTTP_HANDLER, as_list
from tests.infra.test_template_facade import RESOLVED

APIS = ("HTTP", "REST", "URL")
PARAMETER = "/mcp/prod/clients"
SECRET_ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:mcp/clients-AbCdEf"
ISSUERS = "https://login.example.com/tenant/v2.0,https://idp.example.org"
PSEUDO = {
    "AWS::Partition": "aws",
    "AWS::Region": "us-east-1",
    "AWS::AccountId": "123456789012",
    "StateKeySecret": "arn:aws:secretsmanager:us-east-1:123456789012:secret:state-key-AbCdEf",
}
"""Pseudo parameters and the stack's own secret, as CloudFormation would resolve them."""
AGENT_ENV = (
    "LAMBDA_MCP_AUTH_CLIENTS",
    "LAMBDA_MCP_AUTH_TRUSTED_ISSUERS",
    "LAMBDA_MCP_AUTH_DPOP",
    "LAMBDA_MCP_AUTH_DPOP_NONCE",
)


def _values(api: str, mode: str, **more: str) -> dict[str, str]:
    return {"ApiType": api, "AuthMode": mode, **AUTH_MODES[(api, mode)], **more}


def _resolved(value: Any, values: dict[str, str]) -> str:
    """A value of the deployed template as CloudFormation would compute it (parameters, pseudo parameters and
    the facade's resources replaced by plausible values)."""
    if isinstance(value, str):
        return value
    if json.dumps(value) in RESOLVED:
        return RESOLVED[json.dumps(value)]
    defaults = {name: str(spec.get("Default", "")) for name, spec in templates.transformed()["Parameters"].items()}
    result = templates.evaluate(value, {**PSEUDO, **defaults, **values})
    assert isinstance(result, str), value
    return result


def _settings(cfn: dict[str, Any], values: dict[str, str], handler: str = HTTP_HANDLER) -> Settings:
    """The kit's settings from a function's environment; references to other resources (the table, the queue)
    are left out, the facade's and the agent settings are all resolved."""
    env = {}
    for name, value in templates.env(cfn, handler).items():
        try:
            env[name] = _resolved(value, values)
        except KeyError:
            assert name not in AGENT_ENV, name
    return Settings.from_env(env)


def _statements(cfn: dict[str, Any], handler: str = HTTP_HANDLER) -> list[dict[str, Any]]:
    return templates.statements(cfn, templates.function(cfn, handler)[1])


def _reads(cfn: dict[str, Any], action: str, values: dict[str, str]) -> list[list[str]]:
    """The resources of each statement allowing `action`, resolved."""
    return [
        [_resolved(resource, values) for resource in as_list(s["Resource"])]
        for s in _statements(cfn)
        if action in as_list(s["Action"])
    ]


def test_the_parameters_are_off_by_default_and_take_only_what_the_settings_can_use() -> None:
    parameters = templates.transformed()["Parameters"]
    defaults = {name: parameters[name]["Default"] for name in ("AuthClientsParameter", "AuthClientsSecretArn")}
    assert defaults == {"AuthClientsParameter": "", "AuthClientsSecretArn": ""}
    assert parameters["AuthTrustedIssuers"]["Default"] == ""
    assert (parameters["AuthDpop"]["Default"], parameters["AuthDpopNonce"]["Default"]) == ("optional", "off")
    assert parameters["AuthDpop"]["AllowedValues"] == ["off", "optional", "required"]
    assert parameters["AuthDpopNonce"]["AllowedValues"] == ["on", "off"]
    accepts = {
        "AuthClientsParameter": (["", "/mcp/clients", "/a", "/Prod_1/mcp.clients-2"], ["mcp/clients", "/", "/a/",
                                 "/a*", "/a b", "/a/*", "arn:aws:ssm:us-east-1:123456789012:parameter/a"]),
        "AuthClientsSecretArn": ([SECRET_ARN, "", "arn:aws-cn:secretsmanager:cn-north-1:123456789012:secret:c-123456"],
                                 ["arn:aws:secretsmanager:us-east-1:123456789012:secret:mcp/clients",  # partial
                                  "arn:aws:secretsmanager:us-east-1:123456789012:secret:*",
                                  "arn:aws:secretsmanager:us-east-1:123456789012:secret:a*-AbCdEf", "mcp/clients"]),
        "AuthTrustedIssuers": (["", "https://idp.example.com", ISSUERS, "https://a.example.com, https://b.example.com"],
                               ["http://idp.example.com", "https://", "https://a.example.com,", "idp.example.com",
                                "https://a.example.com,,https://b.example.com", "https://a b.example.com"]),
    }  # fmt: skip
    for name, (good, bad) in accepts.items():
        pattern = re.compile(parameters[name]["AllowedPattern"])  # CloudFormation matches the whole value
        for value in good:
            assert pattern.fullmatch(value), (name, value)
        for value in bad:
            assert not pattern.fullmatch(value), (name, value)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("mode", FACADE_MODES)
def test_an_ssm_document_is_read_from_that_parameter_only(api: str, mode: str, tmp_path: Path) -> None:
    values = _values(api, mode, AuthClientsParameter=PARAMETER, AuthTrustedIssuers=ISSUERS)
    cfn = templates.deployed(**values)
    assert templates.findings(cfn, tmp_path) == []
    settings = _settings(cfn, values)
    assert settings.auth_clients == f"ssm:{PARAMETER}"
    assert settings.auth_trusted_issuers == ("https://login.example.com/tenant/v2.0", "https://idp.example.org")
    assert (settings.auth_dpop, settings.auth_dpop_nonce) == ("optional", False)  # the defaults, set explicitly
    (read,) = [s for s in _statements(cfn) if any(a.startswith("ssm:") for a in as_list(s["Action"]))]
    assert as_list(read["Action"]) == ["ssm:GetParameter"]  # what Powertools' get_parameter calls, nothing more
    assert _reads(cfn, "ssm:GetParameter", values) == [[f"arn:aws:ssm:us-east-1:123456789012:parameter{PARAMETER}"]]
    # No kms:Decrypt for it: a SecureString under the AWS managed key aws/ssm is decrypted for any principal of the
    # account that may read it (docs/deploy.md, "Agents and enterprises"). The one kms:Decrypt is the connection
    # token key's (test_template_connections).
    decrypts = [s for s in _statements(cfn) if any(a.startswith("kms:Decrypt") for a in as_list(s["Action"]))]
    assert [s["Resource"] for s in decrypts] == [{"Fn::GetAtt": ["ConnectionTokenKey", "Arn"]}]
    secrets = _reads(cfn, "secretsmanager:GetSecretValue", values)  # the state key's, the upstream client's
    assert len(secrets) == 1 + (mode == "cognito" or "UpstreamClientSecretArn" in values)
    assert SECRET_ARN not in [resource for resources in secrets for resource in resources]
    for statement in _statements(cfn):
        assert not any("*" in a for a in as_list(statement["Action"])), statement
        assert "*" not in json.dumps(statement["Resource"]).replace("/index/*", "")
    assert _resolved(cfn["Outputs"]["OperatorClientsDocument"]["Value"], values) == f"ssm:{PARAMETER}"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("mode", FACADE_MODES)
def test_a_secrets_manager_document_is_read_from_that_secret_only(api: str, mode: str, tmp_path: Path) -> None:
    values = _values(api, mode, AuthClientsSecretArn=SECRET_ARN, AuthDpop="required", AuthDpopNonce="on")
    cfn = templates.deployed(**values)
    assert templates.findings(cfn, tmp_path) == []
    settings = _settings(cfn, values)
    assert settings.auth_clients == f"secretsmanager:{SECRET_ARN}"
    assert (settings.auth_dpop, settings.auth_dpop_nonce, settings.auth_trusted_issuers) == ("required", True, ())
    (read,) = [s for s in _statements(cfn) if s["Resource"] == {"Ref": "AuthClientsSecretArn"}]
    assert as_list(read["Action"]) == ["secretsmanager:GetSecretValue"]
    assert not [s for s in _statements(cfn) if any(a.startswith("ssm:") for a in as_list(s["Action"]))]
    assert _resolved(cfn["Outputs"]["OperatorClientsDocument"]["Value"], values) == f"secretsmanager:{SECRET_ARN}"
    if api == "REST":  # the token authorizer refuses unbound tokens too; it reads no clients and no secret
        authorizer = _settings(cfn, values, AUTHORIZER_HANDLER)
        assert authorizer.auth_dpop == "required" and authorizer.auth_clients is None
        assert [as_list(s["Action"]) for s in _statements(cfn, AUTHORIZER_HANDLER)] == [["kms:GetPublicKey"]]


@pytest.mark.parametrize("mode", FACADE_MODES)
def test_unset_the_facade_reads_no_clients_document(mode: str) -> None:
    values = _values("HTTP", mode)
    cfn = templates.deployed(**values)
    env = templates.env(cfn, HTTP_HANDLER)
    assert "LAMBDA_MCP_AUTH_CLIENTS" not in env and "LAMBDA_MCP_AUTH_TRUSTED_ISSUERS" not in env
    assert (env["LAMBDA_MCP_AUTH_DPOP"], env["LAMBDA_MCP_AUTH_DPOP_NONCE"]) == (
        {"Ref": "AuthDpop"},
        {"Ref": "AuthDpopNonce"},
    )
    assert not [s for s in _statements(cfn) if any(a.startswith("ssm:") for a in as_list(s["Action"]))]
    assert {"Ref": "AuthClientsSecretArn"} not in [s["Resource"] for s in _statements(cfn)]
    assert "OperatorClientsDocument" not in cfn["Outputs"]
    assert _settings(cfn, values).auth_clients is None


@pytest.mark.parametrize("mode", ["jwt", "cognito-direct", "iam", "none"])
def test_without_the_facade_the_agent_parameters_grant_and_set_nothing(mode: str, tmp_path: Path) -> None:
    more = {"AuthClientsParameter": PARAMETER, "AuthTrustedIssuers": ISSUERS, "AuthDpop": "required"}
    for source in ({"AuthClientsParameter": PARAMETER}, {"AuthClientsSecretArn": SECRET_ARN}):
        values = _values("REST", mode, **{**more, **source})
        cfn = templates.deployed(**values)
        assert templates.findings(cfn, tmp_path) == []
        for function in templates.of_type(cfn, "AWS::Lambda::Function").values():
            assert not set(AGENT_ENV) & set(function["Properties"].get("Environment", {}).get("Variables", {}))
        for role in templates.of_type(cfn, "AWS::IAM::Role").values():
            text = json.dumps(role["Properties"].get("Policies", []))
            assert "ssm:" not in text and "AuthClientsSecretArn" not in text and "AuthClientsParameter" not in text
        assert "OperatorClientsDocument" not in cfn["Outputs"]


def test_a_rule_refuses_both_sources_and_lambda_mcp_check_says_so() -> None:
    both = _values("HTTP", "proxy", AuthClientsParameter=PARAMETER, AuthClientsSecretArn=SECRET_ARN)
    (broken,) = templates.validate.broken_rules(templates.transformed(), both)
    assert "set AuthClientsParameter or AuthClientsSecretArn, not both" in broken
    template = load_template(templates.TEMPLATE)
    assert problems(template, Deployment(templates.TEMPLATE, both, "test")) == [
        " ".join(broken.split(": ", 1)[1].split())
    ]
    for one in ({"AuthClientsParameter": PARAMETER}, {"AuthClientsSecretArn": SECRET_ARN}):
        values = _values("HTTP", "proxy", **one)
        assert templates.validate.broken_rules(templates.transformed(), values) == []
        assert problems(template, Deployment(templates.TEMPLATE, values, "test")) == []


def test_the_replay_caches_carry_the_attribute_the_table_expires_items_by() -> None:
    """The facade counts each client assertion's, DPoP proof's and ID-JAG's jti in the state table until it expires
    (`FacadeStore.count`); DynamoDB deletes those items by the table's TTL attribute, which they must carry (as a
    number), or the table grows with every token request."""
    from moto import mock_aws

    from lambda_mcp.storage.dynamodb._client import default_client
    from lambda_mcp.storage.dynamodb.facade import DynamoDBFacadeStore

    table = templates.deployed()["Resources"]["StateTable"]["Properties"]
    ttl = table["TimeToLiveSpecification"]
    assert ttl["Enabled"] is True
    definition = {key: table[key] for key in ("AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes")}
    now = 1_800_000_000.0

    async def write(store: DynamoDBFacadeStore) -> None:
        for kind in ("assertion", "dpop", "id-jag"):  # client_auth, dpop, enterprise
            assert await store.count(kind, f"{kind}-jti", 1, now + 360, now)
            assert not await store.count(kind, f"{kind}-jti", 1, now + 360, now + 1)  # the replay
        await store.put("client", "c", {"name": "x"}, now + 60)

    with mock_aws():
        client = default_client()
        client.create_table(TableName="state", BillingMode="PAY_PER_REQUEST", **definition)
        asyncio.run(write(DynamoDBFacadeStore("state", client=client)))
        items = client.scan(TableName="state")["Items"]
    assert len(items) == 4 and all(item["pk"]["S"].startswith("FACADE#") for item in items)
    for item in items:
        assert float(item[ttl["AttributeName"]]["N"]) > now, item  # epoch seconds: what DynamoDB TTL reads
