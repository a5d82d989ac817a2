"""One line for every mistake at start (issue 34), the console script run as a user runs it: a port out of
range, a host that cannot be bound (named, with `--host` advice), every missing `proxy` setting at once,
the template's auth modes explained, a missing `auth` extra found at start (PyJWT and cryptography
hidden by an import blocker in front of the real CLI), and `invoke` on a tool that asks the client
something: which flag answers it, and the answer given with that flag."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_cli import APP, one_line_error, run
from tests.support.processes import free_port

ASKING = '''
from lambda_mcp import Context, MCPApp

app = MCPApp("asking")


@app.tool()
async def name_it(ctx: Context) -> str:
    """Ask the user for a name."""
    answer = await ctx.elicit("Which name?", str)
    return f"named {answer.data} ({answer.action})"


@app.tool()
async def summarize(ctx: Context) -> str:
    """Ask the client's model."""
    return (await ctx.sample("Summarize.")).text


@app.tool()
async def roots(ctx: Context) -> str:
    """Read the client's roots."""
    return ",".join(root["uri"] for root in await ctx.list_roots())
'''
BLOCKER = """
import sys

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("jwt", "cryptography"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Blocker())
from lambda_mcp.cli import main

raise SystemExit(main(sys.argv[1:]))
"""
"""The console script with PyJWT and cryptography impossible to import, as in an install without the extra."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "asking.py").write_text(ASKING)
    return tmp_path


# -- ports and hosts -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "value"),
    [
        (["dev", "app.py"], "99999"),
        (["dev", "app.py", "--lambda"], "99999"),
        (["dev", "app.py"], "http"),
        (["dev", "app.py"], "0"),
        (["serve", "app.py"], "70000"),
    ],
)
def test_a_port_out_of_range_is_one_line(project: Path, args: list[str], value: str) -> None:
    result = run(*args, "--port", value, cwd=project, LAMBDA_MCP_AUTH="none")
    one_line_error(result, args[0], f"--port must be 1-65535, not {value}")


@pytest.mark.parametrize("args", [["dev", "app.py"], ["dev", "app.py", "--lambda"], ["serve", "app.py"]])
@pytest.mark.parametrize(
    ("host", "reason"),
    [("no-such-host.invalid", "is not a name this machine can resolve"), ("192.0.2.1", "is not an address of")],
)
def test_a_host_that_cannot_be_bound_is_named_with_host_advice(
    project: Path, args: list[str], host: str, reason: str
) -> None:
    result = run(*args, "--host", host, "--port", str(free_port()), cwd=project, LAMBDA_MCP_AUTH="none")
    line = one_line_error(result, args[0], f"cannot listen on {host}:", reason, "choose another --host")
    assert "--port" not in line


# -- auth settings ---------------------------------------------------------------------------------------
def test_proxy_names_every_missing_setting_in_one_line(project: Path) -> None:
    line = one_line_error(run("serve", "app.py", cwd=project, LAMBDA_MCP_AUTH="proxy"), "serve")
    for name in ("AUTH_AUDIENCE", "AUTH_UPSTREAM_ISSUER", "AUTH_UPSTREAM_CLIENT_ID", "AUTH_SIGNING_KEY_ID"):
        assert f"LAMBDA_MCP_{name}" in line


@pytest.mark.parametrize("through_lambda", [False, True])
def test_dev_fills_in_the_audience_and_key_and_names_only_what_it_cannot(project: Path, through_lambda: bool) -> None:
    args = ["dev", "app.py", "--port", str(free_port()), *(["--lambda"] if through_lambda else [])]
    upstream = {"LAMBDA_MCP_AUTH_UPSTREAM_ISSUER": "https://idp.example.com"}  # a real upstream, half given
    line = one_line_error(run(*args, cwd=project, LAMBDA_MCP_AUTH="proxy", **upstream), "dev")
    assert "LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_ID" in line
    assert "LAMBDA_MCP_AUTH_AUDIENCE" not in line and "LAMBDA_MCP_AUTH_SIGNING_KEY" not in line


@pytest.mark.parametrize(
    "args",
    [
        ["dev", "app.py"],
        ["dev", "app.py", "--lambda"],
        ["serve", "app.py"],
        ["invoke", "--tool", "add", "--app", "app.py"],
    ],
)
def test_cognito_is_explained_as_proxy(project: Path, args: list[str]) -> None:
    extra = ["--port", str(free_port())] if args[0] == "dev" else []
    result = run(*args, *extra, cwd=project, LAMBDA_MCP_AUTH="cognito")
    one_line_error(result, args[0], "AuthMode=cognito", "LAMBDA_MCP_AUTH=proxy", "locally use LAMBDA_MCP_AUTH=proxy")


def test_the_blocker_hides_the_auth_packages(project: Path) -> None:
    code = BLOCKER.replace("from lambda_mcp.cli import main", "import jwt  # noqa")
    hidden = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=30)
    assert hidden.returncode != 0 and "No module named 'jwt'" in hidden.stderr


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["dev", "app.py"], {"LAMBDA_MCP_AUTH": "proxy"}),
        (["dev", "app.py", "--lambda"], {"LAMBDA_MCP_AUTH": "proxy"}),
        (["dev", "app.py"], {"LAMBDA_MCP_AUTH": "jwt", "LAMBDA_MCP_AUTH_ISSUER": "https://issuer.example.com"}),
        (["serve", "app.py"], {"LAMBDA_MCP_AUTH": "jwt", "LAMBDA_MCP_AUTH_ISSUER": "https://issuer.example.com"}),
        (["invoke", "--tool", "add", "--app", "app.py"], {"LAMBDA_MCP_AUTH": "proxy"}),
    ],
)
def test_a_missing_auth_extra_is_one_line_at_start_naming_it(
    project: Path, args: list[str], env: dict[str, str]
) -> None:
    """Before: `proxy` was a traceback from cryptography, and `jwt` started and answered 500 to every request
    (so this command would not have ended: the timeout fails the test)."""
    from tests.integration.test_cli import _env

    extra = ["--port", str(free_port())] if args[0] == "dev" else []
    result = subprocess.run(
        [sys.executable, "-c", BLOCKER, *args, *extra],
        cwd=project,
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=30,
    )
    mode = env["LAMBDA_MCP_AUTH"]
    one_line_error(
        result, args[0], f"LAMBDA_MCP_AUTH={mode} needs PyJWT and cryptography", "pip install 'lambda-mcp[auth]'"
    )


# -- invoke on a tool that asks the client ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("tool", "capability", "flag"),
    [("name_it", "elicitation", "--elicit"), ("summarize", "sampling", "--sample"), ("roots", "roots", "--root")],
)
@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_invoke_says_which_flag_answers_what_the_tool_asks(
    project: Path, tool: str, capability: str, flag: str, version: str
) -> None:
    result = run("invoke", "--tool", tool, "--app", "asking.py", "--protocol-version", version, cwd=project)
    assert result.returncode == 1 and json.loads(result.stdout)["statusCode"] in (200, 400)  # the response, as ever
    (hint,) = [line for line in result.stderr.splitlines() if line.startswith("lambda-mcp invoke:")]
    assert f"the tool asks the client for {capability}" in hint and f"pass {flag} " in hint
    assert ("--protocol-version 2026-07-28" in hint) == (version != "2026-07-28")


@pytest.mark.parametrize(
    ("tool", "flags", "text"),
    [
        ("name_it", ["--elicit", '{"value": "Ada"}'], "named Ada (accept)"),
        ("name_it", ["--elicit", '{"action": "decline"}'], "named None (decline)"),
        ("summarize", ["--sample", "A short summary."], "A short summary."),
        ("roots", ["--root", "file:///work", "--root", "file:///tmp"], "file:///work,file:///tmp"),
    ],
)
def test_invoke_answers_what_the_tool_asks_with_the_flag(project: Path, tool: str, flags: list[str], text: str) -> None:
    result = run("invoke", "--tool", tool, "--app", "asking.py", *flags, cwd=project)
    assert result.returncode == 0, result.stderr
    body = json.loads(json.loads(result.stdout)["body"])
    assert body["result"]["content"][0]["text"] == text
    rounds = [json.loads(line) for line in result.stderr.splitlines() if line.startswith('{"level"')]
    assert [r["mcp_method"] for r in rounds if r.get("message") == "request"] == ["tools/call", "tools/call"]


def test_invoke_refuses_answers_on_a_legacy_revision_in_one_line(project: Path) -> None:
    result = run(
        "invoke", "--tool", "summarize", "--app", "asking.py", "--sample", "x", "--protocol-version", "2025-11-25",
        cwd=project,
    )  # fmt: skip
    one_line_error(result, "invoke", "--sample and --root answer a --tool call on 2026-07-28")
