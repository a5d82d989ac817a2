"""`lambda-mcp call/list --login` end to end: the CLI as a subprocess against `lambda-mcp dev
examples/conformance/server.py --lambda --api {http,rest}` with `LAMBDA_MCP_AUTH=proxy` in front of a
real upstream identity provider (npm `oidc-provider`), and a browser: `$BROWSER` names a script
(tests/support/cli_browser.py) that walks the facade's consent page and the upstream's login over HTTP,
then delivers the redirect to the CLI's loopback listener.

The CLI discovers the facade from the 401, registers (DCR) or names its client ID metadata document
(CIMD), signs in with PKCE S256 and `resource`, saves the tokens (mode 0600, under
`$LAMBDA_MCP_CONFIG_DIR`), reuses them, refreshes an expired or refused one without the browser, and
signs in again only when the refresh token is refused too.
"""

from __future__ import annotations

import json
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support.cli_browser import LOG, browser_command, opened
from tests.support.cli_runs import one_line_failure, run
from tests.support.facade_clients import LoopbackTLS, MetadataDocument, loopback_tls
from tests.support.processes import ServerProcess, free_port, lambda_mcp_dev
from tests.support.upstream import Upstream, start_upstream

APP = "examples/conformance/server.py"
APIS = ("http", "rest")
PATHS = {"http": "/mcp", "rest": "/v1/mcp"}
SIMPLE = "This is a simple text response for testing."


@pytest.fixture(scope="module")
def ports() -> dict[str, int]:
    return {api: free_port() for api in APIS}


@pytest.fixture(scope="module")
def upstream(ports: dict[str, int], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    callbacks = [
        f"http://127.0.0.1:{port}{PATHS[api].removesuffix('/mcp')}/oauth/callback" for api, port in ports.items()
    ]
    started = start_upstream(tmp_path_factory.mktemp("upstream") / "oidc.log", callbacks)
    yield started
    started.stop()


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> LoopbackTLS:
    return loopback_tls(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module", params=APIS)
def server(
    request: pytest.FixtureRequest,
    ports: dict[str, int],
    upstream: Upstream,
    tls: LoopbackTLS,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ServerProcess]:
    api: str = request.param
    port, path = ports[api], PATHS[api]
    env = {
        "LAMBDA_MCP_AUTH": "proxy",
        "LAMBDA_MCP_AUTH_AUDIENCE": f"http://127.0.0.1:{port}{path}",
        "LAMBDA_MCP_AUTH_SCOPES": "mcp:tools",
        "SSL_CERT_FILE": str(tls.ca_file),  # the facade fetches the CIMD test's document over https
        **upstream.facade_env(),
    }
    log = tmp_path_factory.mktemp(f"login-{api}") / "server.log"
    process = lambda_mcp_dev(
        APP, through_lambda=True, env=env, port=port, path=path, log=log, extra_args=["--api", api]
    )
    yield process
    process.stop()


class User:
    """A user of the CLI: a config directory of their own, and a browser that logs what it was opened with."""

    def __init__(self, folder: Path, decision: str = "approve") -> None:
        self.config = folder / "config"
        self.browser_log = folder / "browser.log"
        self.env = {
            "LAMBDA_MCP_CONFIG_DIR": str(self.config),
            "BROWSER": browser_command(folder),
            LOG: str(self.browser_log),
            "LAMBDA_MCP_TEST_DECISION": decision,
        }

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return run(*args, env={**self.env, **(env or {})})

    @property
    def sign_ins(self) -> list[dict[str, str]]:
        return opened(self.browser_log)

    @property
    def tokens_file(self) -> Path:
        return self.config / "tokens.json"

    def saved(self, url: str) -> dict[str, object]:
        return dict(json.loads(self.tokens_file.read_text())["servers"][url])

    def edit(self, url: str, **changes: object) -> None:
        document = json.loads(self.tokens_file.read_text())
        document["servers"][url].update(changes)
        self.tokens_file.write_text(json.dumps(document))


def test_login_signs_in_once_then_reuses_refreshes_and_signs_in_again_only_when_it_must(
    server: ServerProcess, tmp_path: Path
) -> None:
    user = User(tmp_path)
    refused = one_line_failure(user.run("call", server.url, "test_simple_text"), 2)
    assert "HTTP 401" in refused and "pass --login" in refused

    # The first --login: the browser opens once, on the facade's authorization endpoint, with PKCE S256 and resource.
    first = user.run("call", server.url, "test_simple_text", "--login")
    assert (first.returncode, first.stdout) == (0, SIMPLE + "\n"), first.stderr
    assert "Signed in; the token is saved in" in first.stderr
    (asked,) = user.sign_ins
    assert asked["code_challenge_method"] == "S256" and len(asked["code_challenge"]) == 43
    assert asked["resource"] == server.url and "mcp:tools" in asked["scope"].split()
    assert urlsplit(asked["redirect_uri"]).hostname == "127.0.0.1" and asked["state"]
    assert stat.S_IMODE(user.tokens_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(user.config.stat().st_mode) == 0o700
    saved = user.saved(server.url)
    assert saved["client_id"] == asked["client_id"] and saved["resource"] == server.url
    assert saved["access_token"] and saved["refresh_token"]

    # Saved: both eras use it, no browser.
    for era in ("2025-11-25", "2026-07-28"):
        listed = user.run("list", server.url, "--login", "--protocol-version", era)
        assert listed.returncode == 0 and "test_simple_text()" in listed.stdout, listed.stderr
        assert listed.stderr == ""
    assert len(user.sign_ins) == 1

    # Expired on the CLI's clock: refreshed before the call (the refresh token rotates), no browser.
    user.edit(server.url, expires_at=time.time() - 5)
    expired = user.run("call", server.url, "test_simple_text", "--login")
    assert (expired.returncode, expired.stdout) == (0, SIMPLE + "\n"), expired.stderr
    renewed = user.saved(server.url)
    assert renewed["access_token"] != saved["access_token"] and renewed["refresh_token"] != saved["refresh_token"]
    assert len(user.sign_ins) == 1

    # Refused by the server (a 401 for a token it cannot verify): refreshed and called again, no browser.
    user.edit(server.url, access_token="not-a-token", expires_at=time.time() + 3600)
    rejected = user.run("call", server.url, "test_simple_text", "--login")
    assert (rejected.returncode, rejected.stdout) == (0, SIMPLE + "\n"), rejected.stderr
    assert user.saved(server.url)["access_token"] not in ("not-a-token", renewed["access_token"])
    assert len(user.sign_ins) == 1

    # The refresh token refused too: the browser again, with the client registered the first time.
    user.edit(server.url, access_token="not-a-token", refresh_token="not-a-refresh-token")
    again = user.run("call", server.url, "test_simple_text", "--login", "--protocol-version", "2025-11-25")
    assert (again.returncode, again.stdout) == (0, SIMPLE + "\n"), again.stderr
    assert len(user.sign_ins) == 2 and user.sign_ins[1]["client_id"] == asked["client_id"]
    assert user.sign_ins[1]["code_challenge"] != asked["code_challenge"]


def test_a_refused_consent_is_one_line_and_saves_nothing(server: ServerProcess, tmp_path: Path) -> None:
    user = User(tmp_path, decision="deny")
    denied = user.run("call", server.url, "test_simple_text", "--login")
    assert denied.returncode == 2 and "Traceback" not in denied.stderr and denied.stdout == ""
    said = denied.stderr.splitlines()  # where the sign-in goes, the browser's chatter, the one line of the failure
    assert said[0].startswith("Signing in to ") and said[1].startswith("If no browser opens, visit: http")
    assert said[2].startswith("a browser's chatter on its stdout")  # on stderr: stdout holds results only
    assert said[3:] == ["lambda-mcp call: --login: the sign-in was refused: access_denied (the user denied access)"]
    assert len(user.sign_ins) == 1
    assert not user.tokens_file.exists()


def test_login_with_a_client_id_metadata_document_registers_nothing(
    server: ServerProcess, tls: LoopbackTLS, tmp_path: Path
) -> None:
    document = MetadataDocument("lambda-mcp cli cimd", "http://127.0.0.1/callback", tls)  # any loopback port
    try:
        user = User(tmp_path)
        metadata = ["--login", "--client-metadata", document.url]
        done = user.run("call", server.url, "test_simple_text", *metadata, env={"SSL_CERT_FILE": str(tls.ca_file)})
        assert (done.returncode, done.stdout) == (0, SIMPLE + "\n"), done.stderr
        (asked,) = user.sign_ins
        assert asked["client_id"] == document.url and urlsplit(asked["redirect_uri"]).path == "/callback"
        assert document.fetches >= 2  # the CLI read its redirect URI, the facade the whole document
        assert user.saved(server.url)["client_id"] == document.url
    finally:
        document.stop()


def test_login_conflicts_are_usage_errors(server: ServerProcess, tmp_path: Path) -> None:
    user = User(tmp_path)
    both = user.run("call", server.url, "test_simple_text", "--login", "--bearer", "t")
    assert "--bearer and --login each set the Authorization header: choose one" in one_line_failure(both, 2)
    alone = user.run("call", server.url, "test_simple_text", "--client-metadata", "https://example.com/c.json")
    assert "--client-metadata goes with --login" in one_line_failure(alone, 2)
    assert user.sign_ins == []
