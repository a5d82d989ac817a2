"""The authorization facade's writes under faults past botocore's retries (issue 41), over real HTTP:
`lambda-mcp dev --lambda` with the facade's state in Amazon DynamoDB Local behind the fault proxy
(tests/support/fault_proxy.py), in front of the real upstream (oidc-provider). "Written, then 500" on
every attempt of one write is the ambiguous case botocore cannot retry past: the write landed, and the
kit was told it failed. Each test pins one finding and failed before its fix.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import boto3
import httpx
import pytest

from lambda_mcp.facade.hashing import digest
from tests.support.fault_proxy import FaultProxy
from tests.support.processes import ServerProcess, free_port, lambda_mcp_dev
from tests.support.upstream import Upstream, sign_in, start_upstream

APP = "examples/conformance/server.py"
ATTEMPTS = 6
"""botocore's standard mode tries a DynamoDB request this many times (the kit's clients: max_attempts 5)."""
TABLE = "facade-faults"


@dataclass
class Facade:
    server: ServerProcess
    proxy: FaultProxy
    upstream: Upstream
    dynamodb: Any

    @property
    def base(self) -> str:
        return self.server.url.rsplit("/mcp", 1)[0]

    def register(self) -> tuple[str, str]:
        redirect = f"http://127.0.0.1:{free_port()}/callback"
        body = {"redirect_uris": [redirect], "token_endpoint_auth_method": "none"}
        registered = httpx.post(self.base + "/oauth/register", json=body)
        assert registered.status_code == 201, registered.text
        return registered.json()["client_id"], redirect

    def authorization(self, client_id: str, redirect: str, verifier: str) -> str:
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": self.server.url,
            "state": "st",
        }
        return f"{self.base}/oauth/authorize?{urlencode(query)}"

    def token(self, form: dict[str, str]) -> httpx.Response:
        return httpx.post(self.base + "/oauth/token", data=form, timeout=60)

    def signed_in(self, user: str) -> tuple[str, dict[str, Any]]:
        client_id, redirect = self.register()
        verifier = secrets.token_urlsafe(48)
        code = sign_in(self.authorization(client_id, redirect, verifier), redirect_uri=redirect, user=user).query
        form = {"grant_type": "authorization_code", "client_id": client_id, "redirect_uri": redirect}
        exchanged = self.token({**form, "code": code["code"], "code_verifier": verifier})
        assert exchanged.status_code == 200, exchanged.text
        return client_id, exchanged.json()

    def refresh(self, client_id: str, token: str) -> httpx.Response:
        return self.token({"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id})

    def items(self, prefix: str) -> list[dict[str, Any]]:
        found = self.dynamodb.scan(TableName=TABLE)["Items"]
        return [item for item in found if item["pk"]["S"].startswith(prefix)]


@pytest.fixture(scope="module")
def facade(dynamodb_local_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Facade]:
    tmp, port = tmp_path_factory.mktemp("facade-faults"), free_port()
    proxy = FaultProxy(dynamodb_local_url)
    upstream = start_upstream(tmp / "oidc.log", [f"http://127.0.0.1:{port}/oauth/callback"])
    env = {"LAMBDA_MCP_AUTH": "proxy", "LAMBDA_MCP_AUTH_AUDIENCE": f"http://127.0.0.1:{port}/mcp"}
    env["LAMBDA_MCP_AUTH_UPSTREAM_CHECK_SECONDS"] = "0"  # every refresh asks the upstream too
    try:
        server = lambda_mcp_dev(
            APP,
            through_lambda=True,
            aws_endpoint=proxy.url,
            env={**env, **upstream.facade_env()},
            port=port,
            log=tmp / "dev.log",
            extra_args=["--table", TABLE],
        )
    except BaseException:
        upstream.stop()
        proxy.stop()
        raise
    yield Facade(server, proxy, upstream, boto3.client("dynamodb", endpoint_url=dynamodb_local_url))
    server.stop()
    upstream.stop()
    proxy.stop()


@pytest.fixture(autouse=True)
def no_faults_left(facade: Facade) -> Iterator[None]:
    yield
    facade.proxy.clear()


def test_a_refresh_whose_swap_landed_but_was_answered_500_every_time_returns_the_new_tokens(facade: Facade) -> None:
    client_id, tokens = facade.signed_in("rita")
    family = tokens["refresh_token"].split(".")[0]
    facade.proxy.arm("dynamodb.PutItem", "written, then 500", ATTEMPTS, containing=f"FACADE#family#{family}")
    refreshed = facade.refresh(client_id, tokens["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text  # was 503, and the client's retry then signed rita out
    assert facade.proxy.injected["dynamodb.PutItem:written, then 500"] >= ATTEMPTS
    again = facade.refresh(client_id, refreshed.json()["refresh_token"])
    assert again.status_code == 200, again.text  # the tokens it returned are the ones that landed


def test_a_refresh_nobody_can_confirm_is_a_503_and_the_clients_retry_gets_what_landed(facade: Facade) -> None:
    client_id, tokens = facade.signed_in("sam")
    family = tokens["refresh_token"].split(".")[0]
    facade.proxy.arm("dynamodb.PutItem", "written, then 500", ATTEMPTS, containing=f"FACADE#family#{family}")
    facade.proxy.arm("dynamodb.GetItem", "server error", ATTEMPTS, after=1, containing=f"FACADE#family#{family}")
    unconfirmed = facade.refresh(client_id, tokens["refresh_token"])
    assert unconfirmed.status_code == 503 and unconfirmed.json()["error"] == "temporarily_unavailable"
    facade.proxy.clear()
    retried = facade.refresh(client_id, tokens["refresh_token"])  # the same token, within the leeway
    assert retried.status_code == 200, retried.text
    assert facade.refresh(client_id, retried.json()["refresh_token"]).status_code == 200


def test_a_code_whose_mark_landed_but_was_answered_500_every_time_goes_on_with_the_sign_in(facade: Facade) -> None:
    client_id, redirect = facade.register()
    verifier = secrets.token_urlsafe(48)
    code = sign_in(facade.authorization(client_id, redirect, verifier), redirect_uri=redirect, user="uma").query["code"]
    facade.proxy.arm("dynamodb.PutItem", "written, then 500", ATTEMPTS, containing=f"FACADE#code#{digest(code)}")
    form = {"grant_type": "authorization_code", "client_id": client_id, "redirect_uri": redirect}
    exchanged = facade.token({**form, "code": code, "code_verifier": verifier})
    assert exchanged.status_code == 200, exchanged.text  # was 503, and the retry a replay: signed out
    assert facade.refresh(client_id, exchanged.json()["refresh_token"]).status_code == 200


def test_a_pending_authorization_whose_take_landed_but_was_answered_500_goes_on_with_the_sign_in(
    facade: Facade,
) -> None:
    client_id, redirect = facade.register()
    browser = httpx.Client(follow_redirects=False, timeout=30)
    try:
        page = browser.get(facade.authorization(client_id, redirect, secrets.token_urlsafe(48)))
        txn = page.text.split('name="txn" value="', 1)[1].split('"', 1)[0]
        approved = browser.post(
            facade.base + "/oauth/consent", data={"txn": txn, "decision": "approve", "confirm": "yes"}
        )
        assert approved.status_code == 302, approved.text
        upstream_login = urljoin(facade.base, approved.headers["location"])
        facade.proxy.arm("dynamodb.UpdateItem", "written, then 500", ATTEMPTS, containing=f"FACADE#pending#{txn}")
        back = sign_in(upstream_login, redirect_uri=redirect, user="vic", browser=browser)
    finally:
        browser.close()
    found = {name: values[0] for name, values in parse_qs(urlsplit(back.location).query).items()}
    assert found.get("code") and "error" not in found, found  # was "This sign-in has expired"
    assert facade.proxy.injected["dynamodb.UpdateItem:written, then 500"] >= ATTEMPTS


def test_a_registration_whose_write_cannot_be_confirmed_leaves_no_client_behind(facade: Facade) -> None:
    before = len(facade.items("FACADE#client#"))
    facade.proxy.arm("dynamodb.PutItem", "written, then 500", ATTEMPTS, containing="FACADE#client#")
    refused = httpx.post(facade.base + "/oauth/register", json={"redirect_uris": ["http://127.0.0.1:1/cb"]})
    assert refused.status_code == 503 and refused.json()["error"] == "temporarily_unavailable"
    assert len(facade.items("FACADE#client#")) == before  # the orphan it may have written is gone


def test_a_refresh_whose_upstream_check_cannot_be_written_back_at_first_still_goes_through(facade: Facade) -> None:
    """The check's write keeps what the upstream answered (a rotated refresh token, for an upstream that
    rotates: the only copy): it is tried again past the client's retries, and never costs the refresh."""
    client_id, tokens = facade.signed_in("wes")
    family = tokens["refresh_token"].split(".")[0]
    # the family's first PutItem is the rotation's swap; the next is the check's write-back
    facade.proxy.arm("dynamodb.PutItem", "server error", ATTEMPTS, after=1, containing=f"FACADE#family#{family}")
    refreshed = facade.refresh(client_id, tokens["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text  # was 503
    assert facade.proxy.injected["dynamodb.PutItem:server error"] == ATTEMPTS
    assert facade.refresh(client_id, refreshed.json()["refresh_token"]).status_code == 200


def test_a_replayed_code_ends_its_sign_in_even_when_the_first_end_failed(facade: Facade) -> None:
    client_id, redirect = facade.register()
    verifier = secrets.token_urlsafe(48)
    code = sign_in(facade.authorization(client_id, redirect, verifier), redirect_uri=redirect, user="xan").query["code"]
    form = {"grant_type": "authorization_code", "client_id": client_id, "redirect_uri": redirect}
    form |= {"code": code, "code_verifier": verifier}
    tokens = facade.token(form).json()
    family = tokens["refresh_token"].split(".")[0]
    facade.proxy.arm("dynamodb.DeleteItem", "server error", ATTEMPTS, containing=f"FACADE#family#{family}")
    assert facade.token(form).status_code == 503  # the replay could not end the sign-in
    again = facade.token(form)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert facade.refresh(client_id, tokens["refresh_token"]).status_code == 400  # was still 200
