"""Operator-registered clients (`LAMBDA_MCP_AUTH_CLIENTS`): the confidential clients an operator trusts with
the machine grants, `client_credentials` and the jwt-bearer grant (an enterprise's ID-JAG).

The setting holds the document, or says where it is:

| value | where |
|---|---|
| `[{...}, ...]` | the JSON list itself (local work, tests) |
| `file:<path>` | a JSON file (local work; `lambda-mcp clients` edits it) |
| `ssm:/<name>` | an SSM parameter (a `SecureString` is decrypted) |
| `secretsmanager:<arn or name>` | a Secrets Manager secret |

The two AWS sources are read as every secret reference of the kit is (`server/outbound/secrets.py`:
Powertools Parameters, cached `SECRET_MAX_AGE`, five minutes), so a change reaches every warm function
within that time. Each entry uses RFC 7591's client metadata names:

```json
{"client_id": "build-agent", "client_name": "Build agent",
 "token_endpoint_auth_method": "private_key_jwt", "jwks": {"keys": [{"kty": "EC", ...}]},
 "grant_types": ["client_credentials"], "scope": "inventory:read"}
```

`token_endpoint_auth_method` is `private_key_jwt` (with `jwks`, or `jwks_uri`: an https URL) or
`client_secret_basic` / `client_secret_post` with `client_secret_hash`, the SHA-256 hex digest of a random
secret of at least 32 bytes (`lambda-mcp clients add` makes both). `grant_types` holds `client_credentials`
and/or `urn:ietf:params:oauth:grant-type:jwt-bearer`; `scope` is every scope the client may be given. An id
cannot look like a registered (`mcp-...`) or a document (URL) client's, so the kinds never meet: anonymous
DCR and CIMD clients stay public and can never use these grants.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import ConfigError, secure_url
from ..server.outbound.secrets import is_reference, resolve
from .clients import displayable

logger = logging.getLogger("lambda_mcp.auth")
CLIENT_CREDENTIALS = "client_credentials"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
MACHINE_GRANTS = (CLIENT_CREDENTIALS, JWT_BEARER)
METHODS = ("private_key_jwt", "client_secret_basic", "client_secret_post")
MAX_CLIENTS = 500
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")
_HEX = re.compile(r"^[0-9a-f]{64}$")


class ClientsUnavailable(Exception):
    """The document cannot be read or used (the message says why; logged, answered 503)."""


@dataclass(frozen=True)
class OperatorClient:
    client_id: str
    name: str | None
    auth_method: str
    grant_types: tuple[str, ...]
    scopes: tuple[str, ...]
    jwks: dict[str, Any] | None = None
    jwks_uri: str | None = None
    secret_hash: str | None = None


def _public_key(key: object) -> bool:
    return isinstance(key, dict) and key.get("kty") in ("EC", "RSA", "OKP") and "d" not in key


def parse_entry(entry: object) -> OperatorClient:
    """One entry of the document; `ValueError` naming what is wrong."""
    if not isinstance(entry, dict):
        raise ValueError("each client must be a JSON object")
    client_id = entry.get("client_id")
    if not isinstance(client_id, str) or not _ID.match(client_id) or client_id.startswith("mcp-"):
        raise ValueError(
            f"client_id {client_id!r} must be 1-128 letters, digits or ._:@- and not start with mcp- (DCR's ids)"
        )
    name = entry.get("client_name")
    if name is not None and (not isinstance(name, str) or len(name) > 200 or not displayable(name)):
        raise ValueError(f"{client_id}: client_name must be printable text of at most 200 characters")
    method = entry.get("token_endpoint_auth_method")
    if method not in METHODS:
        raise ValueError(f"{client_id}: token_endpoint_auth_method must be one of {', '.join(METHODS)}")
    grants = entry.get("grant_types")
    if not isinstance(grants, list) or not grants or not set(grants) <= set(MACHINE_GRANTS):
        raise ValueError(f"{client_id}: grant_types must list {CLIENT_CREDENTIALS} and/or {JWT_BEARER}")
    scope = entry.get("scope", "")
    if not isinstance(scope, str):
        raise ValueError(f"{client_id}: scope must be a space-separated string")
    jwks, jwks_uri, secret_hash = entry.get("jwks"), entry.get("jwks_uri"), entry.get("client_secret_hash")
    if method == "private_key_jwt":
        if (jwks is None) == (jwks_uri is None):
            raise ValueError(f"{client_id}: private_key_jwt needs jwks or jwks_uri (one of them)")
        if jwks is not None:
            keys = jwks.get("keys") if isinstance(jwks, dict) else None
            if not isinstance(keys, list) or not keys or not all(_public_key(key) for key in keys):
                raise ValueError(f"{client_id}: jwks must be {{'keys': [...]}} of public EC, RSA or OKP keys")
        elif not isinstance(jwks_uri, str) or not secure_url(jwks_uri):
            raise ValueError(f"{client_id}: jwks_uri must be an https:// URL (http:// only on loopback)")
        secret_hash = None
    else:
        if not isinstance(secret_hash, str) or not _HEX.match(secret_hash):
            raise ValueError(f"{client_id}: {method} needs client_secret_hash, the secret's SHA-256 hex digest")
        jwks = jwks_uri = None
    return OperatorClient(
        client_id, name, method, tuple(dict.fromkeys(grants)), tuple(dict.fromkeys(scope.split())),
        jwks, jwks_uri, secret_hash,
    )  # fmt: skip


def parse_document(text: str) -> dict[str, OperatorClient]:
    """The clients of a document, by id; `ValueError` naming the first problem."""
    try:
        document = json.loads(text)
    except ValueError:
        raise ValueError("the clients document is not JSON") from None
    if not isinstance(document, list) or len(document) > MAX_CLIENTS:
        raise ValueError(f"the clients document must be a JSON list of at most {MAX_CLIENTS} clients")
    clients: dict[str, OperatorClient] = {}
    for entry in document:
        client = parse_entry(entry)
        if client.client_id in clients:
            raise ValueError(f"client_id {client.client_id} appears twice")
        clients[client.client_id] = client
    return clients


SOURCES = "LAMBDA_MCP_AUTH_CLIENTS must be a JSON list, or file:<path>, ssm:<name> or secretsmanager:<arn>"


def _inline(source: str) -> bool:
    return source.lstrip()[:1] in ("[", "{")


def read_source(source: str) -> str:
    """The document's text from where `source` says (blocking: the AWS sources are fetched)."""
    if _inline(source):
        return source
    kind, _, where = source.partition(":")
    if kind == "file":
        return Path(where).read_text()
    if is_reference(source):  # ssm: or secretsmanager:
        return resolve(source)
    raise ClientsUnavailable(SOURCES)


class Registry:
    """The operator's clients, read on demand (blocking; callers use a worker thread) and kept while the
    source's text is unchanged."""

    def __init__(self, source: str | None) -> None:
        """An inline document is checked at once: a mistake in it stops the start (`ConfigError`)."""
        self.source = source
        self._lock = threading.Lock()
        self._text: str | None = None
        self._clients: dict[str, OperatorClient] = {}
        if not source:
            return
        if _inline(source):
            try:
                self._clients, self._text = parse_document(source), source
            except ValueError as exc:
                raise ConfigError(f"LAMBDA_MCP_AUTH_CLIENTS: {exc}") from None
        elif source.partition(":")[0] not in ("file", "ssm", "secretsmanager"):
            raise ConfigError(SOURCES)

    @property
    def configured(self) -> bool:
        return bool(self.source)

    def clients(self) -> dict[str, OperatorClient]:
        if not self.source:
            return {}
        try:
            text = read_source(self.source)
        except ClientsUnavailable:
            raise
        except Exception as exc:  # a missing file, a denied or throttled read
            raise ClientsUnavailable(f"the clients document could not be read: {exc}") from exc
        with self._lock:
            if text != self._text:
                try:
                    self._clients = parse_document(text)
                except ValueError as exc:
                    raise ClientsUnavailable(f"the clients document cannot be used: {exc}") from None
                self._text = text
            return self._clients

    def find(self, client_id: str) -> OperatorClient | None:
        return self.clients().get(client_id)
