"""`lambda-mcp clients add|list|remove`: an operator edits the authorization facade's operator clients document
(`facade.registered`), the machine clients (agents, CI jobs) allowed `client_credentials` and the jwt-bearer grant.

`--document` (default `$LAMBDA_MCP_AUTH_CLIENTS`) names it: `file:<path>`, `ssm:/<name>` or
`secretsmanager:<ARN>` (`clients_document`). `add` gives a client one credential: public keys (a JWKS file, a
`jwks_uri`, a public key PEM, or a key pair it generates, keeping only the public half in the document) for
`private_key_jwt`, or a random secret it prints once and stores only as its SHA-256 hash
(`client_secret_basic`). The document is checked with the facade's own parser before it is written, so a change
the facade could not use is refused here, never served as a 503. `list` shows no secret or key.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from .clients_document import ClientsError, Source, source_for
from .facade.hashing import digest
from .facade.registered import CLIENT_CREDENTIALS, JWT_BEARER, parse_document

GRANTS = {CLIENT_CREDENTIALS: CLIENT_CREDENTIALS, "jwt-bearer": JWT_BEARER, JWT_BEARER: JWT_BEARER}
SECRET_BYTES = 32
_THUMBPRINT_MEMBERS = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n")}
_CURVE_ALGORITHMS = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    source = source_for(args.document)
    if args.action == "add":
        return add(source, args)
    if args.action == "list":
        return show(source)
    return remove(source, args.client_id)


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--document",
        default=os.environ.get("LAMBDA_MCP_AUTH_CLIENTS"),
        metavar="WHERE",
        help="the clients document: file:<path> (created if missing), ssm:/<name> (a SecureString) or"
        " secretsmanager:<ARN> (default: $LAMBDA_MCP_AUTH_CLIENTS; a deployed stack's OperatorClientsDocument output)",
    )
    parser = argparse.ArgumentParser(
        prog="lambda-mcp clients",
        description="Edit the authorization facade's operator clients (LAMBDA_MCP_AUTH=proxy; template parameters"
        " AuthClientsParameter or AuthClientsSecretArn): the machine clients allowed client_credentials and the"
        " jwt-bearer grant. The facade reads a changed document within 5 minutes. AWS documents are edited with"
        " your AWS credentials. Exit status 2 (one line) when a command cannot be done.",
    )
    actions = parser.add_subparsers(dest="action", required=True)
    add = actions.add_parser(
        "add",
        parents=[common],
        help="register a client with one credential",
        description="Register CLIENT_ID with exactly one credential: public keys (--jwks-file, --jwks-uri,"
        " --public-key or --generate-key; it authenticates with private_key_jwt) or a generated secret (--secret;"
        " client_secret_basic). The new document is checked as the facade checks it before it is written.",
    )
    add.add_argument("client_id", metavar="CLIENT_ID", help="letters, digits or ._:@- (not mcp-..., DCR's ids)")
    add.add_argument("--name", help="a display name (client_name), shown on the facade's logs and `list`")
    add.add_argument(
        "--scope",
        default="",
        help='every scope the client may be given, space separated ("mcp:tools inventory:read"); without it none,'
        " so it can reach only what needs no scope",
    )
    add.add_argument(
        "--grant",
        action="append",
        choices=sorted(GRANTS),
        help="a grant it may use, repeatable: client_credentials (a token for itself) and/or jwt-bearer (an"
        " enterprise user's ID-JAG; also needs the template's AuthTrustedIssuers); default client_credentials",
    )
    credential = add.add_mutually_exclusive_group(required=True)
    credential.add_argument("--jwks-file", type=Path, metavar="FILE", help="a JSON file of its public keys (a JWKS)")
    credential.add_argument("--jwks-uri", metavar="URL", help="an https:// URL serving its public keys (a JWKS)")
    credential.add_argument(
        "--public-key", type=Path, metavar="PEM_FILE", help="its public key (PEM: EC P-256/384/521 or RSA >= 2048)"
    )
    credential.add_argument(
        "--generate-key",
        type=Path,
        metavar="OUT.pem",
        help="make an EC P-256 key pair: the private key (PKCS8 PEM) goes to OUT.pem, mode 0600, never into the"
        " document; the public key (kid = its RFC 7638 thumbprint) into the document",
    )
    credential.add_argument(
        "--secret",
        action="store_true",
        help="make a random 32-byte secret (client_secret_basic), printed once on stdout: the document keeps only"
        " its SHA-256 hash, so it cannot be shown again",
    )
    actions.add_parser(
        "list", parents=[common], help="the clients: id, name, method, grants, scopes (no secret or key)"
    )
    remove = actions.add_parser("remove", parents=[common], help="unregister a client")
    remove.add_argument("client_id", metavar="CLIENT_ID")
    return parser


def load(source: Source) -> list[Any]:
    """The document's entries as they are stored; `ClientsError` when the facade could not use it."""
    text = source.read()
    if text is None:
        return []
    try:
        parse_document(text)
    except ValueError as exc:
        raise ClientsError(f"{source.label}: {exc}; fix it first (the facade cannot use it either)") from None
    entries: list[Any] = json.loads(text)
    return entries


def add(source: Source, args: argparse.Namespace) -> int:
    entries = load(source)
    client_id = args.client_id
    if any(entry.get("client_id") == client_id for entry in entries):
        raise ClientsError(f"{client_id} is already in {source.label}: remove it first to replace it")
    if args.generate_key is not None and args.generate_key.exists():
        raise ClientsError(f"{args.generate_key} exists: --generate-key never overwrites a key")
    entry: dict[str, Any] = {"client_id": client_id}
    if args.name is not None:
        entry["client_name"] = args.name
    secret = private_pem = None
    if args.secret:
        secret = secrets.token_urlsafe(SECRET_BYTES)
        entry |= {"token_endpoint_auth_method": "client_secret_basic", "client_secret_hash": digest(secret)}
    else:
        entry["token_endpoint_auth_method"] = "private_key_jwt"
        if args.jwks_uri is not None:
            entry["jwks_uri"] = args.jwks_uri
        elif args.jwks_file is not None:
            entry["jwks"] = _jwks_file(args.jwks_file)
        elif args.public_key is not None:
            entry["jwks"] = {"keys": [_public_key_file(args.public_key)]}
        else:
            private_pem, public = _key_pair()
            entry["jwks"] = {"keys": [public]}
    entry["grant_types"] = list(dict.fromkeys(GRANTS[grant] for grant in args.grant or [CLIENT_CREDENTIALS]))
    entry["scope"] = " ".join(dict.fromkeys(args.scope.split()))
    updated = [*entries, entry]
    try:
        parse_document(json.dumps(updated))
    except ValueError as exc:
        raise ClientsError(f"{client_id} cannot be added: {str(exc).removeprefix(client_id + ': ')}") from None
    if private_pem is not None:
        _write_private_key(args.generate_key, private_pem)
    try:
        source.write(updated)
    except ClientsError:
        if private_pem is not None:  # a key for a client that does not exist would only confuse
            args.generate_key.unlink(missing_ok=True)
        raise
    how = entry["token_endpoint_auth_method"]
    print(f"added {client_id} ({how}; {', '.join(_grant_names(entry))}) to {source.label}", file=sys.stderr)
    if not entry["scope"]:
        print(
            "it has no scope: its tokens reach only what needs none (nothing, where AuthScopes is set)", file=sys.stderr
        )
    if private_pem is not None:
        kid = entry["jwks"]["keys"][0]["kid"]
        signing = f"its private key is in {args.generate_key} (kid {kid}): sign its client assertions with it (ES256)"
        print(signing, file=sys.stderr)
    if secret is not None:
        print("its secret, shown this once (the document keeps only its hash):", file=sys.stderr)
        print(secret)
    return 0


def show(source: Source) -> int:
    entries = load(source)
    if not entries:
        print(f"no clients in {source.label}", file=sys.stderr)
        return 0
    rows = [("CLIENT_ID", "NAME", "METHOD", "GRANTS", "SCOPES")]
    for entry in entries:
        rows.append(
            (
                entry["client_id"],
                " ".join(str(entry.get("client_name") or "-").split()),
                entry["token_endpoint_auth_method"],
                ",".join(_grant_names(entry)),
                entry.get("scope") or "-",
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[-1]]))
    return 0


def remove(source: Source, client_id: str) -> int:
    entries = load(source)
    kept = [entry for entry in entries if entry.get("client_id") != client_id]
    if len(kept) == len(entries):
        raise ClientsError(f"{client_id} is not in {source.label} (lambda-mcp clients list shows who is)")
    source.write(kept)
    print(
        f"removed {client_id} from {source.label}: the facade refuses it within 5 minutes; a token it already"
        " holds works until it expires (at most an hour)",
        file=sys.stderr,
    )
    return 0


def _grant_names(entry: dict[str, Any]) -> list[str]:
    return ["jwt-bearer" if grant == JWT_BEARER else str(grant) for grant in entry.get("grant_types", [])]


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def thumbprint(jwk: dict[str, Any]) -> str:
    """The JWK's RFC 7638 thumbprint (SHA-256): its required members, sorted, as compact JSON."""
    members = _THUMBPRINT_MEMBERS[jwk["kty"]]
    canonical = json.dumps({name: jwk[name] for name in members}, separators=(",", ":"), sort_keys=True)
    return _b64url(hashlib.sha256(canonical.encode()).digest())


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
    except ImportError:
        raise ClientsError("keys need cryptography, which is not installed: pip install 'lambda-mcp[auth]'") from None
    return serialization


def public_jwk(key: Any) -> dict[str, Any]:
    """A public key as a JWK for the document (`use` sig, `kid` its thumbprint; EC keys name their algorithm);
    `ClientsError` for a key the facade cannot verify assertions with."""
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from jwt.algorithms import ECAlgorithm, RSAAlgorithm

    if isinstance(key, ec.EllipticCurvePublicKey):
        jwk: dict[str, Any] = ECAlgorithm.to_jwk(key, as_dict=True)
        if jwk.get("crv") not in _CURVE_ALGORITHMS:
            raise ClientsError(f"an EC key on {key.curve.name} cannot sign assertions: use P-256, P-384 or P-521")
        jwk = {name: jwk[name] for name in ("kty", "crv", "x", "y")} | {"alg": _CURVE_ALGORITHMS[jwk["crv"]]}
    elif isinstance(key, rsa.RSAPublicKey):
        if key.key_size < 2048:
            raise ClientsError(f"an RSA key of {key.key_size} bits is too weak: use at least 2048")
        full = RSAAlgorithm.to_jwk(key, as_dict=True)
        jwk = {name: full[name] for name in ("kty", "n", "e")}
    else:
        raise ClientsError("the facade verifies EC (ES256/384/512) and RSA (RS/PS) keys only")
    return {**jwk, "use": "sig", "kid": thumbprint(jwk)}


def _key_pair() -> tuple[bytes, dict[str, Any]]:
    serialization = _crypto()
    from cryptography.hazmat.primitives.asymmetric import ec

    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return pem, public_jwk(private.public_key())


def _write_private_key(path: Path, pem: bytes) -> None:
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise ClientsError(f"{path}: cannot be written: {exc.strerror or exc}") from None
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(pem)
    os.chmod(path, 0o600)  # whatever the umask


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ClientsError(f"{path}: {exc.strerror or exc}") from None


def _public_key_file(path: Path) -> dict[str, Any]:
    serialization = _crypto()
    data = _read(path)
    if b"PRIVATE KEY" in data:
        raise ClientsError(f"{path} holds a private key: give the public key only (it never leaves the client)")
    try:
        key = serialization.load_pem_public_key(data)
    except ValueError:
        raise ClientsError(f"{path} is not a PEM public key (-----BEGIN PUBLIC KEY-----)") from None
    return public_jwk(key)


def _jwks_file(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(_read(path))
    except ValueError:
        raise ClientsError(f'{path} is not JSON (a JWKS: {{"keys": [...]}})') from None
    if isinstance(document, dict) and "kty" in document:
        document = {"keys": [document]}  # one JWK
    keys = document.get("keys") if isinstance(document, dict) else None
    if isinstance(keys, list) and any(isinstance(key, dict) and "d" in key for key in keys):
        raise ClientsError(f"{path} holds a private key: give the public keys only (they never leave the client)")
    if not isinstance(keys, list):
        raise ClientsError(f'{path} is not a JWKS ({{"keys": [...]}})')
    return {"keys": keys}
