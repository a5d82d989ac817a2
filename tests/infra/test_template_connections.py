"""template.yaml's connections (issue 37), offline: the KMS key that seals the tokens users grant the app at other
services (`ConnectionTokenKey`: symmetric, rotated, administered by the account), which the HTTP function and the task
workers may use only with the encryption context the kit binds to each row; the connections' client secrets
(`ConnectionSecretArns`, `ConnectionSecretParameterArns`), read by those functions and no other, each by its ARN; and,
in the facade modes only, the task workers' facade settings (from which the kit builds the facade without a call to
AWS) and reads. Every combination lint clean; nothing of it in the other modes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lambda_mcp.config import Settings
from tests.infra import templates
from tests.infra.templates import (
    AUTH_MODES,
    DURABLE_HANDLER,
    FACADE_MODES,
    HTTP_HANDLER,
    WORKER_HANDLER,
    as_list,
    of_type,
)
from tests.infra.test_template_agents import PSEUDO
from tests.infra.test_template_facade import RESOLVED
from tests.support.processes import ROOT

APIS = ("HTTP", "REST", "URL")
SECRETS = [
    "arn:aws:secretsmanager:us-east-1:123456789012:secret:github-AbCdEf",
    "arn:aws:secretsmanager:us-east-1:123456789012:secret:google/client_secret-1a2B3c",
]
PARAMETERS = [
    "arn:aws:ssm:us-east-1:123456789012:parameter/mcp/github",
    "arn:aws:ssm:us-east-1:123456789012:parameter/mcp/google/client.secret",
]
LISTS = {"ConnectionSecretArns": ",".join(SECRETS), "ConnectionSecretParameterArns": ",".join(PARAMETERS)}
KEY = {"Fn::GetAtt": ["ConnectionTokenKey", "Arn"]}
CONTEXT_CONDITION = {
    "ForAllValues:StringEquals": {"kms:EncryptionContextKeys": ["lambda-mcp-item"]},
    "Null": {"kms:EncryptionContextKeys": "false"},
}
"""Only requests whose encryption context has keys, and every one of them `lambda-mcp-item` (AWS KMS Developer
Guide, "AWS KMS condition keys", kms:EncryptionContextKeys: ForAllValues alone would allow a request without one)."""
WORKERS = {"sqs": WORKER_HANDLER, "durable": DURABLE_HANDLER}
"""The function that runs tasks, per TaskBackend (with durable, TaskWorkerFunction only sweeps)."""
WORKER_SETTINGS = {
    "LAMBDA_MCP_STATE_KEY_SECRET",
    "LAMBDA_MCP_AUTH",
    "LAMBDA_MCP_AUTH_AUDIENCE",
    "LAMBDA_MCP_AUTH_UPSTREAM_ISSUER",
    "LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_ID",
    "LAMBDA_MCP_AUTH_SIGNING_KEY_ID",
    "LAMBDA_MCP_AUTH_TOKEN_KEY_ID",
}
"""What a worker gets in the facade modes (and LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET_ARN with a confidential
upstream client): what building the facade and acting as the user need, not the settings of the endpoints only the
HTTP function serves (sign-in conditions, operator clients, trusted issuers, DPoP)."""


def _values(api: str, mode: str, **more: str) -> dict[str, str]:
    return {"ApiType": api, "AuthMode": mode, **AUTH_MODES[(api, mode)], **more}


def _resolved(value: Any, values: dict[str, str]) -> Any:
    """A value of the deployed template as CloudFormation would compute it (the stack's own resources replaced by
    plausible ARNs); a list for Fn::Split."""
    if json.dumps(value) in RESOLVED:
        return RESOLVED[json.dumps(value)]
    defaults = {name: str(spec.get("Default", "")) for name, spec in templates.transformed()["Parameters"].items()}
    return templates.evaluate(value, {**PSEUDO, **defaults, **values})


def _statements(cfn: dict[str, Any], handler: str) -> list[dict[str, Any]]:
    return templates.statements(cfn, templates.function(cfn, handler)[1])


def _by_sid(statements: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    found = {s["Sid"]: s for s in statements}
    assert len(found) == len(statements), [s["Sid"] for s in statements]  # one statement per Sid
    return found


def _assert_least_privilege(statements: list[dict[str, Any]]) -> None:
    for statement in statements:
        assert statement["Effect"] == "Allow"
        assert not any("*" in a for a in as_list(statement["Action"])), statement
        assert "*" not in json.dumps(statement["Resource"]).replace("/index/*", ""), statement


def _assert_token_key_use(statement: dict[str, Any]) -> None:
    assert sorted(as_list(statement["Action"])) == ["kms:Decrypt", "kms:GenerateDataKey"]
    assert statement["Resource"] == KEY
    assert statement["Condition"] == CONTEXT_CONDITION


def _assert_secret_reads(found: dict[str, dict[str, Any]], values: dict[str, str]) -> None:
    """The connections' secrets and parameters, exactly those given, each by its ARN."""
    secrets, parameters = found["ConnectionSecretsRead"], found["ConnectionParametersRead"]
    assert as_list(secrets["Action"]) == ["secretsmanager:GetSecretValue"]
    assert _resolved(secrets["Resource"], values) == SECRETS
    assert as_list(parameters["Action"]) == ["ssm:GetParameter"]  # what Powertools' get_parameter calls
    assert _resolved(parameters["Resource"], values) == PARAMETERS


def test_the_parameters_are_off_by_default_and_take_only_arns() -> None:
    parameters = templates.transformed()["Parameters"]
    assert {name: parameters[name]["Default"] for name in LISTS} == {name: "" for name in LISTS}
    other_partition = "arn:aws-cn:secretsmanager:cn-north-1:123456789012:secret:c-123456"
    accepts = {
        "ConnectionSecretArns": (
            ["", SECRETS[0], LISTS["ConnectionSecretArns"], other_partition],
            [
                SECRETS[0].removesuffix("-AbCdEf"),  # a partial ARN matches no secret in a policy
                "arn:aws:secretsmanager:us-east-1:123456789012:secret:*",
                "arn:aws:secretsmanager:us-east-1:123456789012:secret:gh*-AbCdEf",
                f"{SECRETS[0]}, {SECRETS[1]}",  # a space would stay in the split ARN
                f"{SECRETS[0]},",
                f",{SECRETS[0]}",
                "github-client",
                PARAMETERS[0],
            ],
        ),
        "ConnectionSecretParameterArns": (
            [
                "",
                PARAMETERS[0],
                LISTS["ConnectionSecretParameterArns"],
                "arn:aws:ssm:eu-west-1:123456789012:parameter/a",
            ],
            [
                "/mcp/github",  # a name: the policy needs the ARN
                "arn:aws:ssm:us-east-1:123456789012:parameter/mcp/*",
                "arn:aws:ssm:us-east-1:123456789012:parameter/",
                "arn:aws:ssm:us-east-1:123456789012:parameter/a/",
                f"{PARAMETERS[0]}, {PARAMETERS[1]}",
                f"{PARAMETERS[0]},",
                SECRETS[0],
            ],
        ),
    }
    for name, (good, bad) in accepts.items():
        pattern = re.compile(parameters[name]["AllowedPattern"])  # CloudFormation matches the whole value
        for value in good:
            assert pattern.fullmatch(value), (name, value)
        for value in bad:
            assert not pattern.fullmatch(value), (name, value)


@pytest.mark.parametrize("stage", ["dev", "production"])
@pytest.mark.parametrize("mode", FACADE_MODES)
def test_the_token_key_is_symmetric_rotated_and_administered_by_the_account(mode: str, stage: str) -> None:
    cfn = templates.deployed(**_values("HTTP", mode), Stage=stage)
    key = cfn["Resources"]["ConnectionTokenKey"]
    props = key["Properties"]
    assert (props["KeySpec"], props["KeyUsage"]) == (
        "SYMMETRIC_DEFAULT",
        "ENCRYPT_DECRYPT",
    )  # what GenerateDataKey takes
    assert props["EnableKeyRotation"] is True
    policy = "Retain" if stage == "production" else "Delete"  # kept with the table whose rows it opens
    assert (key["DeletionPolicy"], key["UpdateReplacePolicy"]) == (policy, policy)
    # The account administers it, as the signing key (KMS's default key policy); the functions' roles say the rest.
    signing = cfn["Resources"]["FacadeSigningKey"]["Properties"]["KeyPolicy"]
    assert props["KeyPolicy"] == signing
    (statement,) = props["KeyPolicy"]["Statement"]
    assert statement["Principal"] == {"AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"}}
    assert _resolved(statement["Principal"]["AWS"], {}) == "arn:aws:iam::123456789012:root"


def test_the_policy_condition_admits_what_the_kit_asks_kms_and_nothing_else() -> None:
    """The encryption contexts KmsEnvelope sends (GenerateDataKey when it seals, Decrypt when it opens) are what the
    condition allows; a request without a context, or with another key beside it, is not."""
    from lambda_mcp.facade.token_sealing import KmsEnvelope

    class Kms:
        def __init__(self) -> None:
            self.contexts: list[dict[str, str]] = []

        def generate_data_key(self, **request: Any) -> dict[str, Any]:
            self.contexts.append(request["EncryptionContext"])
            return {"KeyId": request["KeyId"], "Plaintext": bytes(32), "CiphertextBlob": b"wrapped"}

        def decrypt(self, **request: Any) -> dict[str, Any]:
            self.contexts.append(request["EncryptionContext"])
            return {"Plaintext": bytes(32)}

    kms = Kms()
    envelope = KmsEnvelope("arn:aws:kms:us-east-1:123456789012:key/5678efab", client=kms)
    assert envelope.unseal(envelope.seal("tokens", "row-key"), "row-key") == "tokens"
    allowed = set(CONTEXT_CONDITION["ForAllValues:StringEquals"]["kms:EncryptionContextKeys"])

    def admitted(context: dict[str, str] | None) -> bool:  # Null false: keys present; ForAllValues: only those
        return bool(context) and set(context or {}) <= allowed

    assert len(kms.contexts) == 2 and all(admitted(context) for context in kms.contexts)
    assert not [c for c in (None, {}, {"other": "x"}, {"lambda-mcp-item": "row-key", "other": "x"}) if admitted(c)]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("mode", FACADE_MODES)
def test_the_http_function_seals_with_the_key_and_reads_the_connections_secrets(
    api: str, mode: str, tmp_path: Path
) -> None:
    values = _values(api, mode, **LISTS)
    cfn = templates.deployed(**values)
    assert templates.findings(cfn, tmp_path) == []
    env = templates.env(cfn, HTTP_HANDLER)
    assert env["LAMBDA_MCP_AUTH_TOKEN_KEY_ID"] == KEY
    statements = _statements(cfn, HTTP_HANDLER)
    found = _by_sid(statements)
    _assert_token_key_use(found["ConnectionTokenSealing"])
    _assert_secret_reads(found, values)
    # KMS: the signing key's two actions and the token key's two, each on its own key.
    kms = {s["Sid"]: (sorted(as_list(s["Action"])), s["Resource"]) for s in statements if "kms:" in json.dumps(s)}
    assert kms == {
        "FacadeSigning": (["kms:GetPublicKey", "kms:Sign"], {"Fn::GetAtt": ["FacadeSigningKey", "Arn"]}),
        "ConnectionTokenSealing": (["kms:Decrypt", "kms:GenerateDataKey"], KEY),
    }
    _assert_least_privilege(statements)


@pytest.mark.parametrize("mode", FACADE_MODES)
def test_without_connection_secrets_nothing_is_read(mode: str) -> None:
    for backend in WORKERS:
        cfn = templates.deployed(**_values("HTTP", mode, TaskBackend=backend))
        for role in of_type(cfn, "AWS::IAM::Role").values():
            text = json.dumps(role["Properties"].get("Policies", []))
            assert "Connection" not in text.replace("ConnectionTokenKey", "").replace("ConnectionTokenSealing", "")
            assert "ssm:" not in text


@pytest.mark.parametrize("backend", sorted(WORKERS))
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("mode", FACADE_MODES)
def test_the_function_running_tasks_gets_the_facade_settings_and_reads(
    api: str, mode: str, backend: str, tmp_path: Path
) -> None:
    values = _values(api, mode, TaskBackend=backend, **LISTS)
    cfn = templates.deployed(**values)
    assert templates.findings(cfn, tmp_path) == []
    worker = WORKERS[backend]
    http, env = templates.env(cfn, HTTP_HANDLER), templates.env(cfn, worker)
    confidential = mode == "cognito" or "UpstreamClientSecretArn" in values
    expected = WORKER_SETTINGS | ({"LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET_ARN"} if confidential else set())
    assert {name for name in env if name.startswith(("LAMBDA_MCP_AUTH", "LAMBDA_MCP_STATE_KEY"))} == expected
    assert {name: env[name] for name in expected} == {name: http[name] for name in expected}  # the same values
    settings = Settings.from_env({name: _resolved(env[name], values) for name in expected})
    assert settings.auth == "proxy" and settings.auth_issuer == templates.evaluate(
        cfn["Outputs"]["AuthorizationServer"]["Value"], values
    )
    assert (
        settings.auth_token_key_id == RESOLVED[json.dumps(KEY)]
        and settings.state_key_secret == PSEUDO["StateKeySecret"]
    )
    assert (settings.auth_clients, settings.auth_trusted_issuers, settings.auth_upstream_require) == (None, (), ())
    statements = _statements(cfn, worker)
    found = _by_sid(statements)
    upstream = {"FacadeUpstreamSecretRead"} if confidential else set()
    assert set(found) - {"StateTableReadWrite", "TaskQueueSend", "TaskQueuesConsume"} == {
        "StateKeyRead",
        "FacadeRowsDelete",
        "ConnectionTokenSealing",
        "ConnectionSecretsRead",
        "ConnectionParametersRead",
        *upstream,
    }
    assert found["StateKeyRead"]["Resource"] == {"Ref": "StateKeySecret"}
    if confidential:  # ctx.upstream_token() refreshes at the upstream as the facade's client: that secret only
        secret = {"Ref": "UpstreamClientSecret" if mode == "cognito" else "UpstreamClientSecretArn"}
        assert (
            found["FacadeUpstreamSecretRead"]["Resource"]
            == secret
            == http["LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET_ARN"]
        )
    # Its own rows only: a connection's lock, one its provider ended or ctx.disconnect removed.
    delete = found["FacadeRowsDelete"]
    assert as_list(delete["Action"]) == ["dynamodb:DeleteItem"]
    assert delete["Condition"] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["FACADE#*"]}}
    _assert_token_key_use(found["ConnectionTokenSealing"])
    _assert_secret_reads(found, values)
    # It never signs a token nor serves the facade's keys: no kms:Sign, no kms:GetPublicKey; no clients document.
    kms = [a for s in statements for a in as_list(s["Action"]) if a.startswith("kms:")]
    assert sorted(kms) == ["kms:Decrypt", "kms:GenerateDataKey"]
    _assert_least_privilege(statements)
    if backend == "durable":  # the sweeper runs no tool: none of it
        sweeper = templates.env(cfn, WORKER_HANDLER)
        assert not [name for name in sweeper if name.startswith(("LAMBDA_MCP_AUTH", "LAMBDA_MCP_STATE_KEY"))]
        text = json.dumps(_statements(cfn, WORKER_HANDLER))
        assert not [word for word in ("secretsmanager:", "kms:", "ssm:", "DeleteItem") if word in text]


@pytest.mark.parametrize("mode", FACADE_MODES)
def test_a_worker_builds_the_facade_from_its_settings_without_a_call_to_aws(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the worker's import does (lambda_mcp.entrypoints._kit): the settings, then the kit with its facade, whose
    signer, token sealing and secrets are lazy: nothing reaches KMS, Secrets Manager or the upstream until a tool
    asks, so the worker needs no kms:Sign or kms:GetPublicKey."""
    import botocore.client

    from lambda_mcp.facade.signing import KmsSigner
    from lambda_mcp.facade.token_sealing import KmsEnvelope
    from lambda_mcp.kit import Stores, build_kit
    from lambda_mcp.loader import load_app

    values = _values("REST", mode)
    cfn = templates.deployed(**values)
    env = templates.env(cfn, WORKER_HANDLER)
    resolved = {name: _resolved(env[name], values) for name in env if name.startswith("LAMBDA_MCP_AUTH")}
    resolved |= {"LAMBDA_MCP_STATE_KEY_SECRET": _resolved(env["LAMBDA_MCP_STATE_KEY_SECRET"], values)}
    called: list[str] = []

    def refuse(client: Any, operation: str, params: Any) -> Any:
        called.append(operation)
        raise AssertionError(f"{operation} called while the kit was built")

    def offline(*args: Any, **kwargs: Any) -> Any:
        called.append("urlopen")
        raise AssertionError("the network was used while the kit was built")

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", refuse)
    monkeypatch.setattr("urllib.request.urlopen", offline)
    settings = Settings.from_env(resolved)
    kit = build_kit(
        load_app(str(ROOT / "tests/apps/connected.py") + ":app"), settings, streaming=False, stores=Stores.memory()
    )
    assert called == []
    assert kit.facade is not None and kit.dispatcher.runner.credentials is kit.facade.credentials
    assert isinstance(kit.facade.signer, KmsSigner)  # named, never used here
    sealing = kit.facade.credentials.vault.sealing
    assert isinstance(sealing, KmsEnvelope) and sealing.key_id == RESOLVED[json.dumps(KEY)]


@pytest.mark.parametrize("backend", sorted(WORKERS))
@pytest.mark.parametrize("mode", ["jwt", "cognito-direct", "iam", "none"])
def test_outside_the_facade_modes_there_is_no_key_and_nothing_is_set_or_granted(
    mode: str, backend: str, tmp_path: Path
) -> None:
    values = _values("REST", mode, TaskBackend=backend, **LISTS)
    cfn = templates.deployed(**values)
    assert templates.findings(cfn, tmp_path) == []
    assert "ConnectionTokenKey" not in cfn["Resources"] and not of_type(cfn, "AWS::KMS::Key")
    for name, function in of_type(cfn, "AWS::Lambda::Function").items():
        variables = function["Properties"].get("Environment", {}).get("Variables", {})
        assert "LAMBDA_MCP_AUTH_TOKEN_KEY_ID" not in variables, name
        if function["Properties"]["Handler"] in (WORKER_HANDLER, DURABLE_HANDLER):  # as before: no auth, no key
            assert not [n for n in variables if n.startswith(("LAMBDA_MCP_AUTH", "LAMBDA_MCP_STATE_KEY"))], name
    for name, role in of_type(cfn, "AWS::IAM::Role").items():
        text = json.dumps(role["Properties"].get("Policies", []))
        assert not [w for w in ("Connection", "ssm:", "kms:GenerateDataKey", "kms:Decrypt") if w in text], name
