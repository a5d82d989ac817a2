"""Where `lambda-mcp clients` reads and writes the operator clients document (`facade.registered`): a file, an
SSM parameter or a Secrets Manager secret, named as `LAMBDA_MCP_AUTH_CLIENTS` names them.

- `file:<path>`: the file (missing: no clients yet); written whole (a temporary file renamed over it), created
  if missing.
- `ssm:/<name>`: `GetParameter`, decrypted (missing: none yet); `PutParameter` as a `SecureString`, overwriting
  (an existing parameter keeps its KMS key).
- `secretsmanager:<ARN>`: `GetSecretValue` (no value yet: none); `PutSecretValue` (the secret must exist).

The AWS sources use boto3 (the `aws` extra) with the usual credentials and region (a secret's region is its
ARN's). Every failure is a `ClientsError`, one line naming the document and what went wrong: never a traceback.
A read and the write after it are not one transaction: two operators editing the same document at once can
lose one edit (run `lambda-mcp clients list` after a change made in a hurry).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

SSM_MAX_BYTES = 8192
"""An SSM parameter's largest value (the advanced tier's; the standard tier takes 4 KB: `Intelligent-Tiering`
moves a parameter up when it needs it)."""
SECRET_MAX_BYTES = 65_536


class ClientsError(Exception):
    """A `lambda-mcp clients` command cannot be done: the message says which document and why (exit status 2)."""


class Source(Protocol):
    label: str
    """The document as `--document` names it, for messages."""

    def read(self) -> str | None:
        """The document's text; None when it does not exist yet (an empty list)."""

    def write(self, entries: list[Any]) -> None:
        """Replace the document with these entries."""


def source_for(document: str | None) -> Source:
    """The document `--document` (or `LAMBDA_MCP_AUTH_CLIENTS`) names."""
    if not document:
        raise ClientsError(
            "no clients document: pass --document file:clients.json, ssm:/name or secretsmanager:<ARN>, or set"
            " LAMBDA_MCP_AUTH_CLIENTS"
        )
    if document.lstrip()[:1] in ("[", "{"):
        raise ClientsError(
            "that is the clients document itself (inline JSON), which cannot be edited: name one with --document"
            " file:<path>, ssm:/<name> or secretsmanager:<ARN>"
        )
    kind, _, where = document.partition(":")
    if kind == "file" and where:
        return FileSource(Path(where), document)
    if kind == "ssm" and where.startswith("/") and len(where) > 1:
        return ParameterSource(where, document)
    if kind == "secretsmanager" and where:
        return SecretSource(where, document)
    raise ClientsError(
        f"{document!r} names no clients document: use file:<path>, ssm:/<name> (the full name) or secretsmanager:<ARN>"
    )


def _text(entries: list[Any], compact: bool) -> str:
    if compact:
        return json.dumps(entries, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(entries, indent=2, ensure_ascii=False) + "\n"


class FileSource:
    def __init__(self, path: Path, label: str) -> None:
        self.path = path
        self.label = label

    def read(self) -> str | None:
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise ClientsError(f"{self.label}: cannot be read: {_reason(exc)}") from None

    def write(self, entries: list[Any]) -> None:
        folder = self.path.parent
        try:
            mode = self.path.stat().st_mode & 0o777
        except OSError:
            mode = 0o600  # a new document: public keys and hashes only, but nobody else's business
        try:
            descriptor, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=folder)
        except OSError as exc:
            raise ClientsError(f"{self.label}: cannot be written: {_reason(exc)}") from None
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(_text(entries, compact=False))
            os.chmod(temporary, mode)
            os.replace(temporary, self.path)  # whole or not at all: the facade never reads half a document
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise ClientsError(f"{self.label}: cannot be written: {_reason(exc)}") from None


def _reason(exc: Exception) -> str:
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__


@contextlib.contextmanager
def _aws(label: str, doing: str) -> Iterator[None]:
    """AWS failures as one line: `<document>: <doing>: <error code>: <message>`."""
    from botocore.exceptions import BotoCoreError, ClientError, NoRegionError

    try:
        yield
    except ClientError as exc:
        error = exc.response.get("Error", {})
        code, message = error.get("Code", "error"), " ".join(str(error.get("Message", "")).split())
        raise ClientsError(f"{label}: {doing}: {code}: {message}".rstrip(": ")) from None
    except NoRegionError:
        raise ClientsError(f"{label}: {doing}: no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION)") from None
    except BotoCoreError as exc:
        raise ClientsError(f"{label}: {doing}: {' '.join(str(exc).split())}") from None


def _client(service: str, label: str, region: str | None = None) -> Any:
    try:
        import boto3
    except ImportError:
        raise ClientsError(f"{label} needs boto3, which is not installed: pip install 'lambda-mcp[aws]'") from None
    with _aws(label, "boto3"):
        return boto3.client(service, region_name=region) if region else boto3.client(service)


class ParameterSource:
    def __init__(self, name: str, label: str) -> None:
        self.name = name
        self.label = label
        self._existed = False

    def read(self) -> str | None:
        client = _client("ssm", self.label)
        with _aws(self.label, "GetParameter"):
            try:
                found = client.get_parameter(Name=self.name, WithDecryption=True)
            except client.exceptions.ParameterNotFound:
                return None
        self._existed = True
        return str(found["Parameter"]["Value"])

    def write(self, entries: list[Any]) -> None:
        text = _text(entries, compact=True)
        if len(text.encode()) > SSM_MAX_BYTES:
            raise ClientsError(
                f"{self.label}: the document would be {len(text.encode())} bytes, over an SSM parameter's"
                f" {SSM_MAX_BYTES}: keep it in Secrets Manager instead (secretsmanager:<ARN>, up to 64 KB)"
            )
        client = _client("ssm", self.label)
        options: dict[str, Any] = {}
        if self._existed:  # keep the KMS key the operator chose (PutParameter without KeyId means aws/ssm)
            with _aws(self.label, "DescribeParameters (to keep the parameter's KMS key)"):
                described = client.describe_parameters(
                    ParameterFilters=[{"Key": "Name", "Option": "Equals", "Values": [self.name]}]
                )["Parameters"]
            if described and described[0].get("Type") == "SecureString" and described[0].get("KeyId"):
                options["KeyId"] = described[0]["KeyId"]
        with _aws(self.label, "PutParameter"):
            client.put_parameter(
                Name=self.name,
                Value=text,
                Type="SecureString",
                Overwrite=True,
                Tier="Intelligent-Tiering",  # standard up to 4 KB, advanced above (billed monthly)
                **options,
            )


class SecretSource:
    def __init__(self, secret: str, label: str) -> None:
        self.secret = secret
        self.label = label
        fields = secret.split(":")
        self.region = fields[3] if secret.startswith("arn:") and len(fields) > 6 else None

    def read(self) -> str | None:
        client = _client("secretsmanager", self.label, self.region)
        with _aws(self.label, "GetSecretValue"):
            try:
                found = client.get_secret_value(SecretId=self.secret)
            except client.exceptions.ResourceNotFoundException:
                return None  # no such secret (the write says so), or one without a value yet
        if "SecretString" not in found:
            raise ClientsError(f"{self.label}: the secret holds binary data, not the clients document (JSON text)")
        return str(found["SecretString"])

    def write(self, entries: list[Any]) -> None:
        text = _text(entries, compact=True)
        if len(text.encode()) > SECRET_MAX_BYTES:
            raise ClientsError(f"{self.label}: the document would be {len(text.encode())} bytes, over a secret's 64 KB")
        client = _client("secretsmanager", self.label, self.region)
        with _aws(self.label, "PutSecretValue"):
            try:
                client.put_secret_value(SecretId=self.secret, SecretString=text)
            except client.exceptions.ResourceNotFoundException:
                raise ClientsError(
                    f"{self.label}: no such secret: create it first (aws secretsmanager create-secret --name NAME),"
                    " then name its full ARN"
                ) from None
