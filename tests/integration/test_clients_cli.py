"""`lambda-mcp clients add|list|remove` on a `file:` document, run as an operator runs it (a subprocess), and the
facade using what it wrote: a client added with `--generate-key` signs an assertion with the private key it was
given and gets a token; one added with `--secret` authenticates with the secret printed once; a removed one is
refused. Mistakes are one line and exit status 2, and leave the document as it was."""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from lambda_mcp.facade.hashing import digest
from lambda_mcp.facade.registered import JWT_BEARER, parse_document
from lambda_mcp.kit import build_kit
from lambda_mcp.loader import load_app
from tests.support.agent_keys import ASSERTION_TYPE, KeyPair, client_assertion
from tests.unit.test_facade_http import BASE, FakeUpstream
from tests.unit.test_facade_http import settings as facade_settings

pytestmark = pytest.mark.slow  # every test runs the console script


def clients(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LAMBDA_MCP_")}
    return subprocess.run(
        [sys.executable, "-m", "lambda_mcp.cli", "clients", *args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def refused(done: subprocess.CompletedProcess[str], *fragments: str) -> str:
    assert done.returncode == 2 and not done.stdout, done.stdout + done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("lambda-mcp clients: ") and "Traceback" not in done.stderr, done.stderr
    for fragment in fragments:
        assert fragment in line, line
    return line


@pytest.fixture
async def facade(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """The facade in process, reading the operator clients from tmp_path/clients.json (as a deployment reads
    its SSM parameter: on demand)."""
    settings = facade_settings(LAMBDA_MCP_AUTH_CLIENTS=f"file:{tmp_path / 'clients.json'}")
    kit = build_kit(load_app("tests/apps/scoped.py"), settings, streaming=True, local=True)
    assert kit.facade is not None
    kit.facade.upstream = FakeUpstream()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=kit.asgi()), base_url=BASE) as http:
        yield http


async def _with_key(http: httpx.AsyncClient, keys: KeyPair, client_id: str) -> httpx.Response:
    form = {
        "grant_type": "client_credentials",
        "client_assertion_type": ASSERTION_TYPE,
        "client_assertion": client_assertion(keys, client_id, BASE),
    }
    return await http.post("/oauth/token", data=form)


async def _with_secret(http: httpx.AsyncClient, client_id: str, secret: str) -> httpx.Response:
    basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    headers = {"authorization": f"Basic {basic}"}
    return await http.post("/oauth/token", data={"grant_type": "client_credentials"}, headers=headers)


@pytest.mark.anyio
async def test_added_clients_get_tokens_from_the_facade_and_a_removed_one_does_not(
    tmp_path: Path, facade: httpx.AsyncClient
) -> None:
    document = f"file:{tmp_path / 'clients.json'}"
    added = clients(
        "add", "build-agent", "--name", "Build agent", "--scope", "mcp:tools inventory:read",
        "--grant", "client_credentials", "--grant", "jwt-bearer", "--generate-key", "agent.pem",
        cwd=tmp_path, LAMBDA_MCP_AUTH_CLIENTS=document,
    )  # fmt: skip
    assert added.returncode == 0 and not added.stdout, added.stderr
    assert "added build-agent (private_key_jwt; client_credentials, jwt-bearer)" in added.stderr
    key_file = tmp_path / "agent.pem"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    private = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    (stored,) = parse_document((tmp_path / "clients.json").read_text()).values()
    assert stored.grant_types == ("client_credentials", JWT_BEARER) and stored.scopes == ("mcp:tools", "inventory:read")
    assert stored.jwks is not None
    (jwk,) = stored.jwks["keys"]
    assert "d" not in jwk and "PRIVATE" not in (tmp_path / "clients.json").read_text()
    keys = KeyPair(kid=jwk["kid"], key=private)
    assert jwk["kid"] == keys.thumbprint  # RFC 7638, computed independently by the tests' own helper
    assert jwk == {**keys.public_jwk, "kid": keys.thumbprint}  # the document holds this very key's public half

    # --secret: printed once on stdout, only its hash stored, and it authenticates client_secret_basic.
    with_secret = clients("add", "ci-job", "--secret", "--scope", "mcp:tools", "--document", document, cwd=tmp_path)
    assert with_secret.returncode == 0, with_secret.stderr
    secret = with_secret.stdout.strip()
    assert len(base64.urlsafe_b64decode(secret + "=")) == 32 and secret not in with_secret.stderr
    text = (tmp_path / "clients.json").read_text()
    assert secret not in text and digest(secret) in text

    listed = clients("list", "--document", document, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.split() == ["CLIENT_ID", "NAME", "METHOD", "GRANTS", "SCOPES"]
    assert rows[0].split("  ")[0] == "build-agent" and "Build agent" in rows[0]
    assert rows[0].endswith("private_key_jwt      client_credentials,jwt-bearer  mcp:tools inventory:read")
    assert rows[1].split() == ["ci-job", "-", "client_secret_basic", "client_credentials", "mcp:tools"]
    for hidden in (digest(secret), secret, jwk["x"], jwk["y"], jwk["kid"]):
        assert hidden not in listed.stdout + listed.stderr

    # The facade accepts what the CLI wrote: an assertion signed with the generated key, the printed secret.
    response = await _with_key(facade, keys, "build-agent")
    assert response.status_code == 200, response.text
    claims = jwt.decode(response.json()["access_token"], options={"verify_signature": False})
    assert claims["client_id"] == "build-agent" and claims["scope"] == "mcp:tools inventory:read"
    assert (await _with_key(facade, KeyPair(kid=jwk["kid"]), "build-agent")).status_code == 401  # another key
    assert (await _with_secret(facade, "ci-job", secret)).status_code == 200
    assert (await _with_secret(facade, "ci-job", secret + "x")).status_code == 401

    removed = clients("remove", "ci-job", "--document", document, cwd=tmp_path)
    assert removed.returncode == 0 and "removed ci-job" in removed.stderr, removed.stderr
    gone = await _with_secret(facade, "ci-job", secret)
    assert gone.status_code == 401 and gone.json()["error"] == "invalid_client"
    assert (await _with_key(facade, keys, "build-agent")).status_code == 200  # the other client stays


def test_a_public_key_a_jwks_file_and_a_jwks_uri_each_register_a_key_client(tmp_path: Path) -> None:
    document = "file:clients.json"
    ec_key, rsa_pem = KeyPair(), tmp_path / "rsa.pub.pem"
    (tmp_path / "ec.pub.pem").write_bytes(
        ec_key.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    from cryptography.hazmat.primitives.asymmetric import rsa

    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    rsa_pem.write_bytes(
        rsa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    (tmp_path / "jwks.json").write_text(json.dumps({"keys": [KeyPair().public_jwk]}))
    for args in (
        ["ec-agent", "--public-key", "ec.pub.pem"],
        ["rsa-agent", "--public-key", str(rsa_pem)],
        ["jwks-agent", "--jwks-file", "jwks.json"],
        ["remote-agent", "--jwks-uri", "https://agent.example.com/jwks.json"],
    ):
        done = clients("add", *args, "--document", document, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    found = parse_document((tmp_path / "clients.json").read_text())
    assert found["ec-agent"].jwks == {"keys": [{**ec_key.public_jwk, "kid": ec_key.thumbprint}]}
    (rsa_jwk,) = found["rsa-agent"].jwks["keys"]  # type: ignore[index]
    assert rsa_jwk["kty"] == "RSA" and "alg" not in rsa_jwk and "d" not in rsa_jwk  # RS256 or PS256
    assert found["remote-agent"].jwks_uri == "https://agent.example.com/jwks.json"
    assert {client.auth_method for client in found.values()} == {"private_key_jwt"}


def test_mistakes_are_one_line_and_leave_the_document_as_it_was(tmp_path: Path) -> None:
    document = "file:clients.json"
    assert clients("add", "agent", "--secret", "--document", document, cwd=tmp_path).returncode == 0
    before = (tmp_path / "clients.json").read_text()
    (tmp_path / "taken.pem").write_text("keep me")
    (tmp_path / "private.pem").write_text(KeyPair().pem)
    cases = [
        (["add", "agent", "--secret"], ["agent is already in file:clients.json"]),
        (["add", "mcp-agent", "--secret"], ["mcp-agent cannot be added", "not start with mcp-"]),
        (["add", "other", "--generate-key", "taken.pem"], ["taken.pem exists", "never overwrites"]),
        (["add", "other", "--public-key", "private.pem"], ["holds a private key"]),
        (["add", "other", "--public-key", "missing.pem"], ["missing.pem: No such file or directory"]),
        (["add", "other", "--jwks-uri", "http://agent.example.com/jwks"], ["jwks_uri must be an https:// URL"]),
        (["remove", "nobody"], ["nobody is not in file:clients.json"]),
    ]
    for args, fragments in cases:
        refused(clients(*args, "--document", document, cwd=tmp_path), *fragments)
    assert (tmp_path / "clients.json").read_text() == before and (tmp_path / "taken.pem").read_text() == "keep me"

    (tmp_path / "bad.json").write_text(json.dumps([{"client_id": "x", "token_endpoint_auth_method": "none"}]))
    refused(clients("list", "--document", "file:bad.json", cwd=tmp_path), "file:bad.json", "token_endpoint_auth_method")
    (tmp_path / "notjson.json").write_text("{")
    refused(clients("add", "y", "--secret", "--document", "file:notjson.json", cwd=tmp_path), "is not JSON")
    assert (tmp_path / "notjson.json").read_text() == "{"
    refused(clients("list", cwd=tmp_path), "no clients document", "LAMBDA_MCP_AUTH_CLIENTS")
    refused(clients("list", cwd=tmp_path, LAMBDA_MCP_AUTH_CLIENTS="[]"), "inline JSON", "cannot be edited")
    refused(clients("list", "--document", "ssm:name", cwd=tmp_path), "ssm:/<name>")
    empty = clients("list", "--document", "file:nothing-yet.json", cwd=tmp_path)
    assert empty.returncode == 0 and empty.stderr == "no clients in file:nothing-yet.json\n"


def test_the_help_texts_say_what_each_command_does(tmp_path: Path) -> None:
    top = clients("--help", cwd=tmp_path)
    assert top.returncode == 0 and "operator clients" in top.stdout and "AuthClientsParameter" in top.stdout
    add = clients("add", "--help", cwd=tmp_path)
    for text in ("--generate-key", "mode 0600", "--secret", "shown", "RFC 7638", "jwt-bearer", "--document"):
        assert text in " ".join(add.stdout.split()), text
    listed: Any = subprocess.run(
        [sys.executable, "-m", "lambda_mcp.cli", "--help"], capture_output=True, text=True, timeout=60
    )
    assert "clients" in listed.stdout
