"""`lambda-mcp check` (issue 34): in a project made by `lambda-mcp new`, before anything is uploaded, it refuses
what CloudFormation would refuse only after `sam deploy` packaged and uploaded the stack (no AuthMode, a value
the template does not allow, a broken template rule), one line each, and passes what the template accepts. Its
verdicts agree with the template's own Rules as infra/validate_template.py evaluates them, for every front door
and auth mode. The agent settings (issue 36): issuers that are no https:// URL named, both clients documents
refused, and a setting the chosen AuthMode would ignore warned about without refusing; the connections' client
secrets (issue 37) the same way."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from lambda_mcp.check import Deployment, load_template, problems
from tests.infra import templates

MODES = ["jwt", "cognito", "cognito-direct", "proxy", "iam", "none"]
PROXY = [
    "AuthMode=proxy",
    "AuthAudience=https://m.example.com/mcp",
    "UpstreamIssuer=https://login.example.com",
    "UpstreamClientId=c",
]
SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:mcp-clients-AbCdEf"
PARAMETER_ARN = "arn:aws:ssm:us-east-1:123456789012:parameter/mcp/github-secret"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("check")
    _cli(["new", "demo"], parent)
    return parent / "demo"


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lambda_mcp.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def _refused(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 1 and not done.stdout, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert lines and all(line.startswith("lambda-mcp check: ") for line in lines), done.stderr
    return [line.removeprefix("lambda-mcp check: ") for line in lines]


def test_a_new_project_is_refused_until_it_chooses_an_auth_mode(project: Path) -> None:
    (line,) = _refused(_cli(["check"], project))
    assert line.startswith("AuthMode has no value and template.yaml gives it no default: choose one of ")
    assert line.split("choose one of ")[1].startswith(", ".join(MODES) + " "), line
    samconfig = project / "samconfig.toml"
    original = samconfig.read_text()
    try:
        samconfig.write_text(original.replace('parameter_overrides = "', 'parameter_overrides = "AuthMode=iam '))
        done = _cli(["check"], project)
    finally:
        samconfig.write_text(original)
    assert done.returncode == 0 and not done.stderr, done.stdout + done.stderr
    assert done.stdout == (
        "lambda-mcp check: AuthMode=iam, ApiType=HTTP, Transport=buffered: nothing CloudFormation would refuse"
        " (template.yaml, samconfig.toml [default.deploy.parameters])\n"
    )


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (["AuthMode=cognito"], [r"^AuthMode=cognito or proxy needs AuthAudience .*placeholder.*McpEndpoint output"]),
        (["AuthMode=none", "Transport=streaming"], [r"^Transport=streaming needs ApiType=REST or URL"]),
        (["AuthMode=Iam"], [r"^AuthMode=Iam is not one of jwt, cognito, cognito-direct, proxy, iam, none$"]),
        (["AuthMode="], [r"^AuthMode is empty: choose one of jwt, "]),
        (["AuthMode=none", "StreamingTimeout=5"], [r"^StreamingTimeout=5 is below its MinValue, 30$"]),
        (["AuthMode=none", "WafRateLimit=5"], [r"^WafRateLimit=5: WafRateLimit must be 0 \(no web ACL\) or "]),
        (["Authmode=iam"], [r"sets Authmode, which template\.yaml has no parameter of", r"^AuthMode has no value"]),
        (["AuthMode=proxy", "AuthAudience=https://m.example.com/mcp"], [r"needs UpstreamIssuer", r"UpstreamClientId"]),
        (
            [
                *PROXY,
                "AuthClientsParameter=/mcp/clients",
                "AuthTrustedIssuers=https://a.example.com,http://b.example.com,",
            ],
            [r"^AuthTrustedIssuers: http://b\.example\.com, an empty entry are not https:// issuer URLs"],
        ),
        (
            [*PROXY, "AuthClientsParameter=/mcp/clients", f"AuthClientsSecretArn={SECRET}"],
            [r"^set AuthClientsParameter or AuthClientsSecretArn, not both"],
        ),
        ([*PROXY, "AuthClientsParameter=mcp/clients"], [r"^AuthClientsParameter=mcp/clients: .*starting with a slash"]),
        ([*PROXY, f"AuthClientsSecretArn={SECRET.removesuffix('-AbCdEf')}"], [r"AuthClientsSecretArn=.*full ARN"]),
        (
            [*PROXY, f"ConnectionSecretArns={SECRET},{SECRET.removesuffix('-AbCdEf')}"],
            [r"^ConnectionSecretArns=.*: ConnectionSecretArns must be empty or Secrets Manager secrets' full ARNs"],
        ),
        (
            [*PROXY, "ConnectionSecretParameterArns=/mcp/github"],
            [r"^ConnectionSecretParameterArns=/mcp/github: .*ARNs"],
        ),
    ],
)
def test_what_cloudformation_would_refuse_after_the_upload_is_one_line_each(
    project: Path, overrides: list[str], expected: list[str]
) -> None:
    lines = _refused(_cli(["check", "--parameter-overrides", *overrides], project))
    assert len(lines) == len(expected), lines
    for line, pattern in zip(lines, expected, strict=True):
        assert re.search(pattern, line), (pattern, line)


def test_a_missing_or_unreadable_template_is_exit_status_2(tmp_path: Path) -> None:
    done = _cli(["check"], tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("lambda-mcp check: no template.yaml in "), done.stderr
    (tmp_path / "samconfig.toml").write_text("version = [")
    done = _cli(["check"], tmp_path)
    assert done.returncode == 2 and "samconfig.toml cannot be read" in done.stderr, done.stderr


@pytest.mark.parametrize(("api", "mode"), sorted(templates.AUTH_MODES))
def test_its_verdicts_agree_with_the_templates_rules(api: str, mode: str) -> None:
    template = load_template(templates.TEMPLATE)
    needed = templates.AUTH_MODES[(api, mode)]
    values = {"AuthMode": mode, "ApiType": api, **needed}
    assert problems(template, Deployment(templates.TEMPLATE, values, "test")) == []
    refused = 0
    for name in needed:  # leave out each value the combination has: the same refusals, in the same words
        without = {k: v for k, v in values.items() if k != name}
        expected = [b.split(": ", 1)[1] for b in templates.validate.broken_rules(templates.transformed(), without)]
        found = problems(template, Deployment(templates.TEMPLATE, without, "test"))
        assert found == [" ".join(e.split()) for e in expected], (name, found, expected)
        refused += bool(found)
    assert refused == len({"AuthIssuer", "AuthAudience", "UpstreamIssuer", "UpstreamClientId"} & set(needed))


@pytest.mark.parametrize(
    ("overrides", "warned"),
    [
        (
            [
                "AuthMode=jwt",
                "AuthIssuer=https://i.example.com",
                "AuthAudience=https://m.example.com/mcp",
                "AuthClientsParameter=/mcp/clients",
                "AuthDpop=required",
            ],
            [
                "AuthClientsParameter=/mcp/clients is ignored: AuthMode=jwt runs no authorization facade",
                "AuthDpop=required is ignored: AuthMode=jwt runs no authorization facade",
            ],
        ),
        (
            ["AuthMode=iam", f"AuthClientsSecretArn={SECRET}"],
            [f"AuthClientsSecretArn={SECRET} is ignored: AuthMode=iam"],
        ),
        (
            ["AuthMode=none", f"ConnectionSecretArns={SECRET}", f"ConnectionSecretParameterArns={PARAMETER_ARN}"],
            [
                f"ConnectionSecretArns={SECRET} is ignored: AuthMode=none runs no authorization facade",
                f"ConnectionSecretParameterArns={PARAMETER_ARN} is ignored: AuthMode=none",
            ],
        ),
        ([*PROXY, f"ConnectionSecretArns={SECRET},{SECRET}", f"ConnectionSecretParameterArns={PARAMETER_ARN}"], []),
        (
            [*PROXY, "AuthTrustedIssuers=https://idp.example.com"],
            ["AuthTrustedIssuers is set without AuthClientsParameter"],
        ),
        (
            [
                *PROXY,
                "AuthTrustedIssuers=https://idp.example.com",
                f"AuthClientsSecretArn={SECRET}",
                "AuthDpopNonce=on",
            ],
            [],
        ),
        (["AuthMode=cognito", "AuthAudience=https://m.example.com/mcp", "AuthClientsParameter=/mcp/clients"], []),
    ],
)
def test_agent_settings_the_stack_would_ignore_are_warned_not_refused(
    project: Path, overrides: list[str], warned: list[str]
) -> None:
    done = _cli(["check", "--parameter-overrides", *overrides], project)
    assert done.returncode == 0 and "nothing CloudFormation would refuse" in done.stdout, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == len(warned), lines
    for line, fragment in zip(lines, warned, strict=True):
        assert line.startswith("lambda-mcp check: warning: ") and fragment in line, line
