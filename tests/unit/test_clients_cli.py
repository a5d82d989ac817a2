"""`lambda-mcp clients` on the AWS documents, in process against moto: an SSM `SecureString` parameter (created,
overwritten, its KMS key kept) and a Secrets Manager secret, each read back by the facade's own `Registry` as a
deployment reads it (Powertools Parameters); AWS errors and bad documents as one line with exit status 2; the
keys it derives (RFC 7638 thumbprints) and the ones it refuses."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from cryptography.hazmat.primitives import serialization

from lambda_mcp import clients_document
from lambda_mcp.cli import main
from lambda_mcp.clients_cli import public_jwk, thumbprint
from lambda_mcp.clients_document import ClientsError
from lambda_mcp.facade.hashing import digest
from lambda_mcp.facade.registered import JWT_BEARER, Registry, parse_document
from tests.support.agent_keys import KeyPair

REGION = "us-east-1"
SECRET_NAME = "mcp/clients"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    from aws_lambda_powertools.utilities import parameters
    from moto import mock_aws

    for name, value in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_DEFAULT_REGION": REGION}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("LAMBDA_MCP_AUTH_CLIENTS", raising=False)
    with mock_aws():
        import boto3

        parameters.clear_caches()  # Powertools keeps what it read for 5 minutes, per name
        yield {"ssm": boto3.client("ssm", REGION), "secretsmanager": boto3.client("secretsmanager", REGION)}
        parameters.clear_caches()


def run(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["clients", *args])
    out, err = capsys.readouterr()
    return status, out, err


def one_line(status: int, out: str, err: str, *fragments: str) -> str:
    assert status == 2 and not out, (out, err)
    (line,) = err.splitlines()
    assert line.startswith("lambda-mcp clients: ")
    for fragment in fragments:
        assert fragment in line, line
    return line


def test_an_ssm_document_is_a_secure_string_that_the_facade_reads(
    aws: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ssm = aws["ssm"]
    document = "ssm:/mcp/clients"
    key_file = tmp_path / "agent.pem"
    status, _, err = run(
        "add", "agent", "--generate-key", str(key_file), "--grant", "jwt-bearer", "--document", document, capsys=capsys
    )
    assert status == 0, err
    stored = ssm.get_parameter(Name="/mcp/clients", WithDecryption=True)["Parameter"]
    assert stored["Type"] == "SecureString"
    (entry,) = json.loads(stored["Value"])
    assert entry["grant_types"] == [JWT_BEARER] and "PRIVATE" not in stored["Value"]
    private = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    assert entry["jwks"]["keys"] == [{**KeyPair(key=private).public_jwk, "kid": KeyPair(key=private).thumbprint}]
    status, out, _ = run("add", "ci", "--secret", "--scope", "mcp:tools", "--document", document, capsys=capsys)
    assert status == 0
    secret = out.strip()
    registry = Registry(document)  # what the deployed function does with LAMBDA_MCP_AUTH_CLIENTS=ssm:/mcp/clients
    found = registry.clients()
    assert set(found) == {"agent", "ci"} and found["ci"].secret_hash == digest(secret)
    status, out, _ = run("list", "--document", document, capsys=capsys)
    assert status == 0 and [line.split()[0] for line in out.splitlines()] == ["CLIENT_ID", "agent", "ci"]
    assert secret not in out and digest(secret) not in out
    status, _, err = run("remove", "agent", "--document", document, capsys=capsys)
    assert status == 0, err
    value = ssm.get_parameter(Name="/mcp/clients", WithDecryption=True)["Parameter"]["Value"]
    assert set(parse_document(value)) == {"ci"}


def test_an_existing_parameter_keeps_its_kms_key(aws: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    ssm = aws["ssm"]
    key_id = "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555"
    ssm.put_parameter(Name="/cmk/clients", Value="[]", Type="SecureString", KeyId=key_id)
    assert run("add", "ci", "--secret", "--document", "ssm:/cmk/clients", capsys=capsys)[0] == 0
    (described,) = ssm.describe_parameters(
        ParameterFilters=[{"Key": "Name", "Option": "Equals", "Values": ["/cmk/clients"]}]
    )["Parameters"]
    assert described["KeyId"] == key_id and described["Version"] == 2


def test_a_secrets_manager_document_is_written_to_the_secret(
    aws: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    secrets = aws["secretsmanager"]
    arn = secrets.create_secret(Name=SECRET_NAME)["ARN"]  # no value yet: no clients
    document = f"secretsmanager:{arn}"
    status, out, err = run("list", "--document", document, capsys=capsys)
    assert status == 0 and err == f"no clients in {document}\n"
    status, out, err = run("add", "ci", "--secret", "--document", document, capsys=capsys)
    assert status == 0, err
    value = secrets.get_secret_value(SecretId=arn)["SecretString"]
    assert parse_document(value)["ci"].secret_hash == digest(out.strip())
    assert set(Registry(document).clients()) == {"ci"}  # as the deployed function reads it
    status, _, _ = run("remove", "ci", "--document", document, capsys=capsys)
    assert status == 0 and json.loads(secrets.get_secret_value(SecretId=arn)["SecretString"]) == []


def test_aws_mistakes_are_one_line(aws: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = f"arn:aws:secretsmanager:{REGION}:123456789012:secret:nowhere-AbCdEf"
    one_line(*run("add", "x", "--secret", "--document", f"secretsmanager:{missing}", capsys=capsys), "create it first")
    aws["ssm"].put_parameter(Name="/bad/clients", Value='[{"client_id": "x"}]', Type="SecureString")
    one_line(*run("list", "--document", "ssm:/bad/clients", capsys=capsys), "ssm:/bad/clients", "fix it first")
    binary = aws["secretsmanager"].create_secret(Name="bin", SecretBinary=b"\x00")["ARN"]
    one_line(*run("list", "--document", f"secretsmanager:{binary}", capsys=capsys), "binary")
    key_file = tmp_path / "k.pem"
    big = "x" * 9000
    aws["ssm"].put_parameter(Name="/big/clients", Value="[]", Type="SecureString")
    line = one_line(*run("add", "x", "--name", big[:200], "--scope", big, "--generate-key", str(key_file),
                         "--document", "ssm:/big/clients", capsys=capsys), "over an SSM parameter's 8192")  # fmt: skip
    assert "secretsmanager:" in line and not key_file.exists()  # the key of a client never written is removed


def test_a_denied_call_is_one_line_naming_the_document_and_the_call(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Denied:
        class exceptions:  # noqa: N801 (boto3's shape)
            class ParameterNotFound(Exception):
                pass

        def get_parameter(self, **kwargs: Any) -> Any:
            error = {"Error": {"Code": "AccessDeniedException", "Message": "User: x is not\nauthorized"}}
            raise ClientError(error, "GetParameter")  # type: ignore[arg-type]

    monkeypatch.setattr(clients_document, "_client", lambda *args: Denied())
    line = one_line(*run("list", "--document", "ssm:/mcp/clients", capsys=capsys))
    assert (
        line == "lambda-mcp clients: ssm:/mcp/clients: GetParameter: AccessDeniedException: User: x is not authorized"
    )


def test_without_a_region_the_error_says_which_setting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    one_line(*run("list", "--document", "ssm:/mcp/clients", capsys=capsys), "no AWS region", "AWS_REGION")


def test_the_kid_is_the_rfc_7638_thumbprint() -> None:
    keys = KeyPair()
    jwk = public_jwk(keys.key.public_key())
    assert jwk["kid"] == keys.thumbprint and jwk["alg"] == "ES256" and jwk["use"] == "sig"
    # RFC 7638 section 3.1's example RSA key and its thumbprint
    n = (
        "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3"
        "oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdA"
        "ZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-"
        "kEgU8awapJzKnqDKgw"
    )
    assert (
        thumbprint({"kty": "RSA", "n": n, "e": "AQAB", "alg": "RS256"}) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
    )


def test_keys_the_facade_cannot_verify_with_are_refused() -> None:
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    weak = rsa.generate_private_key(public_exponent=65537, key_size=1024).public_key()
    with pytest.raises(ClientsError, match="1024 bits is too weak"):
        public_jwk(weak)
    with pytest.raises(ClientsError, match="EC .* and RSA"):
        public_jwk(ed25519.Ed25519PrivateKey.generate().public_key())
    with pytest.raises(ClientsError, match="secp256k1 cannot sign"):
        public_jwk(ec.generate_private_key(ec.SECP256K1()).public_key())
    p384 = public_jwk(ec.generate_private_key(ec.SECP384R1()).public_key())
    assert p384["alg"] == "ES384" and p384["crv"] == "P-384"


def test_a_jwks_file_of_one_key_is_wrapped_and_one_with_a_private_key_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = KeyPair()
    (tmp_path / "one.json").write_text(json.dumps(keys.public_jwk))
    document = f"file:{tmp_path / 'clients.json'}"
    assert run("add", "a", "--jwks-file", str(tmp_path / "one.json"), "--document", document, capsys=capsys)[0] == 0
    assert parse_document((tmp_path / "clients.json").read_text())["a"].jwks == {"keys": [keys.public_jwk]}
    private = {**keys.public_jwk, "d": "secret"}
    (tmp_path / "private.json").write_text(json.dumps({"keys": [private]}))
    result = run("add", "b", "--jwks-file", str(tmp_path / "private.json"), "--document", document, capsys=capsys)
    one_line(*result, "holds a private key")
    assert "secret" not in (tmp_path / "clients.json").read_text()
