"""The parts of `lambda-mcp dev` and `serve` that need no server (issue 34): the development sign-in's
protocol and where it refuses to run, what `dev` fills in for `proxy`, the one message naming every missing
setting, ports and hosts, the request log of `dev --lambda`, the Host headers `serve` allows outside Lambda,
and what `--reload` watches."""

from __future__ import annotations

import base64
import errno
import hashlib
import io
import json
import socket
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
import pytest

from lambda_mcp.config import ConfigError, Settings
from lambda_mcp.local import signin
from lambda_mcp.local.dev import cannot_listen
from lambda_mcp.local.idp import CLIENT_ID, DevIdentityProvider, DevSignInError, Reply, Request, from_env
from lambda_mcp.local.reload import watched
from lambda_mcp.local.requestlog import HandlerLog, request_line
from lambda_mcp.local.usage import UsageError, port_number, project_app
from lambda_mcp.serving import own_hosts

ISSUER = "http://127.0.0.1:8000/_dev/idp"
CALLBACK = "http://127.0.0.1:8000/oauth/callback"
SECRET = "s" * 32
VERIFIER = "v" * 50


def challenge(verifier: str = VERIFIER) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def idp(clock: Clock, monkeypatch: pytest.MonkeyPatch) -> DevIdentityProvider:
    for name in ("AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_RUNTIME_API"):
        monkeypatch.delenv(name, raising=False)
    return DevIdentityProvider(ISSUER, SECRET, CALLBACK, clock=clock)


def get(idp: DevIdentityProvider, path: str, query: dict[str, str] | None = None, **headers: str) -> Reply:
    return idp.respond(Request("GET", path, query or {}, headers))


def post(idp: DevIdentityProvider, path: str, form: dict[str, str], **headers: str) -> Reply:
    return idp.respond(Request("POST", path, {}, headers, urlencode(form).encode()))


def authorization(**changes: str) -> dict[str, str]:
    query = {
        "client_id": CLIENT_ID,
        "redirect_uri": CALLBACK,
        "response_type": "code",
        "scope": "openid offline_access",
        "state": "st",
        "nonce": "no",
        "code_challenge": challenge(),
        "code_challenge_method": "S256",
    }
    return {**query, **changes}


def log_in(idp: DevIdentityProvider, username: str = "ana") -> dict[str, str]:
    page = get(idp, "/authorize", authorization()).body.decode()
    held = page.split('name="request" value="')[1].split('"')[0]
    reply = post(idp, "/authorize", {"request": held, "username": username})
    assert reply.status == 302, reply.body
    location = dict(reply.headers)["Location"]
    assert location.startswith(CALLBACK + "?")
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def exchange(idp: DevIdentityProvider, code: str, verifier: str = VERIFIER, secret: str = SECRET) -> Reply:
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK, "code_verifier": verifier}
    return post(idp, "/token", {**form, "client_id": CLIENT_ID, "client_secret": secret})


# -- the development sign-in ---------------------------------------------------------------------------------
def test_the_sign_in_is_an_openid_provider_with_pkce_refresh_and_userinfo(idp: DevIdentityProvider) -> None:
    metadata = json.loads(get(idp, "/.well-known/openid-configuration").body)
    assert metadata["issuer"] == ISSUER and metadata["token_endpoint"] == ISSUER + "/token"
    assert metadata["code_challenge_methods_supported"] == ["S256"] and "offline_access" in metadata["scopes_supported"]
    answer = log_in(idp)
    assert answer["state"] == "st" and answer["iss"] == ISSUER
    tokens = json.loads(exchange(idp, answer["code"]).body)
    keys = json.loads(get(idp, "/jwks").body)["keys"]
    claims = jwt.decode(tokens["id_token"], jwt.PyJWK(keys[0]).key, algorithms=["ES256"], audience=CLIENT_ID)
    assert (claims["iss"], claims["sub"], claims["nonce"], claims["email"]) == (ISSUER, "ana", "no", "ana@example.com")
    info = get(idp, "/userinfo", authorization=f"Bearer {tokens['access_token']}")
    assert json.loads(info.body)["sub"] == "ana"
    basic = base64.b64encode(f"{CLIENT_ID}:{SECRET}".encode()).decode()
    refreshed = post(
        idp,
        "/token",
        {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
        authorization=f"Basic {basic}",
    )
    again = json.loads(refreshed.body)
    assert refreshed.status == 200 and "nonce" not in jwt.decode(again["id_token"], options={"verify_signature": False})


def test_a_code_works_once_within_a_minute_with_its_verifier_and_the_clients_secret(
    idp: DevIdentityProvider, clock: Clock
) -> None:
    code = log_in(idp)["code"]
    assert exchange(idp, code, verifier="w" * 50).status == 400  # PKCE
    assert exchange(idp, code, secret="wrong").status == 401
    assert exchange(idp, code).status == 200
    assert json.loads(exchange(idp, code).body)["error"] == "invalid_grant"  # used
    late = log_in(idp)["code"]
    clock.now += 61
    assert exchange(idp, late).status == 400


@pytest.mark.parametrize(
    "change",
    [
        {"client_id": "other"},
        {"redirect_uri": "http://127.0.0.1:9/elsewhere"},
        {"code_challenge_method": "plain"},
        {"scope": "email"},
        {"response_type": "token"},
    ],
)
def test_a_wrong_authorization_request_is_refused_on_the_page_never_redirected(
    idp: DevIdentityProvider, change: dict[str, str]
) -> None:
    reply = get(idp, "/authorize", authorization(**change))
    assert reply.status == 400 and "Location" not in dict(reply.headers)


def test_the_login_needs_its_own_sealed_request_and_a_username(idp: DevIdentityProvider) -> None:
    assert post(idp, "/authorize", {"request": "e30.forged", "username": "ana"}).status == 400
    page = get(idp, "/authorize", authorization()).body.decode()
    held = page.split('name="request" value="')[1].split('"')[0]
    assert post(idp, "/authorize", {"request": held, "username": "  "}).status == 400
    assert "Development only." in page and page.count("<input") == 2  # the sealed request, and the username


def test_the_sign_in_refuses_to_run_in_lambda_or_off_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DevSignInError, match="loopback"):
        DevIdentityProvider("http://10.0.0.1:8000/_dev/idp", SECRET, CALLBACK)
    with pytest.raises(DevSignInError, match="loopback"):
        DevIdentityProvider(ISSUER, SECRET, "https://mcp.example.com/oauth/callback")
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "mcp-http")
    with pytest.raises(DevSignInError, match="never runs in Lambda"):
        DevIdentityProvider(ISSUER, SECRET, CALLBACK)


def test_settings_refuse_the_sign_in_as_upstream_in_lambda() -> None:
    env = {"LAMBDA_MCP_AUTH": "proxy", "LAMBDA_MCP_AUTH_AUDIENCE": "http://127.0.0.1:8000/mcp"}
    env |= {"LAMBDA_MCP_AUTH_SIGNING_KEY_ID": "alias/k", **_upstream()}
    assert Settings.from_env(env).auth_upstream_issuer == ISSUER  # under `lambda-mcp dev`
    for lambda_env in ({"AWS_LAMBDA_FUNCTION_NAME": "mcp-http"}, {"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001"}):
        with pytest.raises(ConfigError, match="development sign-in"):
            Settings.from_env({**env, **lambda_env})


def _upstream() -> dict[str, str]:
    return {
        "LAMBDA_MCP_AUTH_UPSTREAM_ISSUER": ISSUER,
        "LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_ID": CLIENT_ID,
        "LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET": SECRET,
    }


# -- what dev fills in -------------------------------------------------------------------------------------
def test_dev_fills_in_proxy_for_its_own_url_and_the_sign_in_mounts_from_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    env = {"LAMBDA_MCP_AUTH": "proxy"}
    signin.prepare("127.0.0.1", 8000, "/v1/mcp", env)
    assert env["LAMBDA_MCP_AUTH_AUDIENCE"] == "http://127.0.0.1:8000/v1/mcp"
    assert env["LAMBDA_MCP_AUTH_SIGNING_KEY"].startswith("-----BEGIN PRIVATE KEY-----")
    assert env["LAMBDA_MCP_AUTH_UPSTREAM_ISSUER"] == ISSUER and env["LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_ID"] == CLIENT_ID
    found = from_env("http://127.0.0.1:8000", env)
    assert found is not None and found.callback == "http://127.0.0.1:8000/v1/oauth/callback"
    assert from_env("http://127.0.0.1:8001", env) is None  # another server's
    assert from_env("http://127.0.0.1:8000", {**env, "LAMBDA_MCP_AUTH": "none"}) is None


def test_dev_keeps_what_is_set_and_adds_no_sign_in_beside_an_upstream() -> None:
    env = {"LAMBDA_MCP_AUTH": "proxy", "LAMBDA_MCP_AUTH_UPSTREAM_ISSUER": "https://idp.example.com"}
    env["LAMBDA_MCP_AUTH_AUDIENCE"] = "http://localhost:8000/mcp"
    signin.prepare("127.0.0.1", 8000, "/mcp", env)
    assert env["LAMBDA_MCP_AUTH_AUDIENCE"] == "http://localhost:8000/mcp"
    assert env["LAMBDA_MCP_AUTH_UPSTREAM_ISSUER"] == "https://idp.example.com"
    assert "LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET" not in env
    none = {"LAMBDA_MCP_AUTH": "none"}
    signin.prepare("127.0.0.1", 8000, "/mcp", none)
    assert none == {"LAMBDA_MCP_AUTH": "none"}


def test_dev_offers_the_sign_in_on_loopback_only() -> None:
    with pytest.raises(UsageError, match="loopback only, not --host 0.0.0.0"):
        signin.prepare("0.0.0.0", 8000, "/mcp", {"LAMBDA_MCP_AUTH": "proxy"})
    env = {"LAMBDA_MCP_AUTH": "proxy"}
    signin.prepare("::1", 8000, "/mcp", env)
    assert env["LAMBDA_MCP_AUTH_AUDIENCE"] == "http://[::1]:8000/mcp"


def test_every_missing_proxy_setting_is_named_in_one_message() -> None:
    with pytest.raises(ConfigError) as raised:
        Settings.from_env({"LAMBDA_MCP_AUTH": "proxy"})
    message = str(raised.value)
    for name in ("AUTH_AUDIENCE", "AUTH_UPSTREAM_ISSUER", "AUTH_UPSTREAM_CLIENT_ID", "AUTH_SIGNING_KEY_ID"):
        assert f"LAMBDA_MCP_{name}" in message
    assert message.count("LAMBDA_MCP_AUTH=proxy needs") == 1


@pytest.mark.parametrize(
    ("mode", "meaning"), [("cognito", "AUTH=proxy"), ("cognito-direct", "AUTH=jwt"), ("iam", "AUTH=gateway")]
)
def test_the_templates_auth_modes_are_explained(mode: str, meaning: str) -> None:
    with pytest.raises(ConfigError, match=f"is the template's AuthMode.*{meaning}"):
        Settings.from_env({"LAMBDA_MCP_AUTH": mode})


# -- ports, hosts, targets ----------------------------------------------------------------------------------
def test_ports_are_1_to_65535() -> None:
    assert port_number("8000") == 8000 and port_number(65535) == 65535 and port_number(None) is None
    for bad in ("0", "65536", "99999", "-1", "http", ""):
        with pytest.raises(UsageError, match="--port must be 1-65535"):
            port_number(bad)


def test_a_bind_failure_advises_the_host_or_the_port_as_the_cause_is() -> None:
    busy = str(cannot_listen(OSError(errno.EADDRINUSE, "Address already in use"), "127.0.0.1", 8000))
    assert busy.endswith("stop what uses it or choose --port")
    foreign = str(cannot_listen(OSError(errno.EADDRNOTAVAIL, "Cannot assign requested address"), "192.0.2.1", 8000))
    assert "192.0.2.1 is not an address of this machine" in foreign and "--port" not in foreign
    unknown = str(cannot_listen(socket.gaierror(-2, "Name or service not known"), "nohost", 8000))
    assert "--host nohost is not a name" in unknown and "--port" not in unknown
    privileged = str(cannot_listen(OSError(errno.EACCES, "Permission denied"), "127.0.0.1", 80))
    assert "from 1024 up" in privileged


def test_the_projects_app_is_the_default_target(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="give the app as --app"):
        project_app(None, "--app", tmp_path)
    (tmp_path / "app").mkdir()
    (tmp_path / "app/app.py").write_text("")
    assert project_app(None, "TARGET", tmp_path) == "app/app.py"
    assert project_app("other.py", "TARGET", tmp_path) == "other.py"


def test_reload_watches_a_file_targets_directory_or_the_current_one(tmp_path: Path) -> None:
    assert watched("app/app.py:app", tmp_path) == (tmp_path / "app").resolve()
    assert watched("pkg.server:app", tmp_path) == tmp_path.resolve()


def test_serve_outside_lambda_allows_the_loopback_address_it_listens_on() -> None:
    assert own_hosts("127.0.0.1", 8080) == ("127.0.0.1:8080", "localhost:8080")
    assert own_hosts("::1", 8080) == ("[::1]:8080", "localhost:8080")
    assert set(own_hosts("0.0.0.0", 9000)) == {"127.0.0.1:9000", "localhost:9000", "[::1]:9000", "0.0.0.0:9000"}
    assert own_hosts("10.1.2.3", 8080) == ()  # a real interface: LAMBDA_MCP_ALLOWED_HOSTS names its host names


# -- dev --lambda's request lines --------------------------------------------------------------------------
def _handler_line(correlation: str, **fields: Any) -> str:
    line = {"message": "request", "timestamp": "t", "correlation_id": correlation, **fields}
    return '{"level":"INFO","location":"lambda_mcp",' + json.dumps(line, separators=(",", ":"))[1:] + "\n"


@pytest.mark.parametrize("json_logs", [False, True])
def test_the_handlers_request_lines_are_held_for_their_request_and_other_lines_pass(json_logs: bool) -> None:
    out = io.StringIO()
    log = HandlerLog(out, json_logs=json_logs)
    request = _handler_line("r1", mcp_method="tools/call", tool_name="add", status=200)
    log.write(request[:30])  # a line may come in pieces
    log.write(request[30:] + '{"level":"WARNING","message":"careful"}\n')
    assert log.take("r1")["tool_name"] == "add" and log.take("r1") == {} and log.take(None) == {}
    assert ('"message":"request"' in out.getvalue()) == json_logs
    assert '"message":"careful"' in out.getvalue()
    line = request_line("POST", "/mcp", 200, {"mcp_method": "tools/call", "tool_name": "add"}, 3.2)
    assert line == "POST /mcp 200 tools/call add 3 ms"
