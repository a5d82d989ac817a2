"""MCP clients signing in through the authorization facade (`LAMBDA_MCP_AUTH=proxy`) for end-to-end tests:
the official Python SDK's `OAuthClientProvider` with DCR or a client ID metadata document (CIMD), its
user answered by `sign_in`; a CIMD document served over https on 127.0.0.1 with a certificate made for the
test module; and the checks every flow shares (the facade's metadata and its own tokens, verified with
its JWKS)."""

from __future__ import annotations

import ipaddress
import json
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import httpx2
import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

from .loopback import respond
from .processes import free_port
from .upstream import SignIn, sign_in

TOOL, TOOL_TEXT = "test_simple_text", "This is a simple text response for testing."
"""examples/conformance/server.py's simplest tool and its answer."""


def loopback_redirect_uri() -> str:
    """A native client's loopback redirect URI (RFC 8252) where nothing listens: `sign_in` stops there."""
    return f"http://127.0.0.1:{free_port()}/callback"


class MemoryTokens:
    """The Python SDK's `TokenStorage`: the registration and the tokens, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@dataclass
class HeadlessUser:
    """The SDK's redirect and callback handlers: the user signs in over HTTP (no browser) as `user`."""

    redirect_uri: str
    user: str = "alice"
    sign_ins: list[SignIn] = field(default_factory=list)

    async def redirect(self, authorization_url: str) -> None:
        self.sign_ins.append(
            await anyio.to_thread.run_sync(
                lambda: sign_in(authorization_url, redirect_uri=self.redirect_uri, user=self.user)
            )
        )

    async def answer(self) -> AuthorizationCodeResult:
        query = self.sign_ins[-1].query
        assert "error" not in query, query
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))


@dataclass
class Flow:
    """What one Python SDK client did: its storage, its user, and its tokens before and after refresh."""

    storage: MemoryTokens
    user: HeadlessUser
    issued: OAuthToken
    refreshed: OAuthToken
    texts: list[str]
    authorization_server: str


async def python_sdk_flow(
    mcp_url: str, client_name: str, *, mode: str, redirect_uri: str = "", cimd_url: str | None = None
) -> Flow:
    """Connect with no token (401), discover, register (DCR, or CIMD with `cimd_url`), consent, sign in,
    exchange, call the tool; then let the access token expire on the client's clock, so the SDK
    refreshes it before the next request, and call again."""
    redirect_uri = redirect_uri or loopback_redirect_uri()
    user, storage = HeadlessUser(redirect_uri), MemoryTokens()
    provider = OAuthClientProvider(
        server_url=mcp_url,
        client_metadata=OAuthClientMetadata(
            client_name=client_name,
            redirect_uris=[AnyUrl(redirect_uri)],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=user.redirect,
        callback_handler=user.answer,
        client_metadata_url=cimd_url,
    )
    texts: list[str] = []
    with anyio.fail_after(90):
        async with (
            httpx2.AsyncClient(auth=provider, timeout=20) as http,
            Client(streamable_http_client(mcp_url, http_client=http), mode=mode) as client,
        ):
            texts.append((await client.call_tool(TOOL, {})).content[0].text)  # type: ignore[union-attr]
            assert storage.tokens is not None
            issued = storage.tokens
            provider.context.token_expiry_time = time.time() - 1  # expired, as far as the client knows
            texts.append((await client.call_tool(TOOL, {})).content[0].text)  # type: ignore[union-attr]
    assert storage.tokens is not None and provider.context.auth_server_url is not None
    return Flow(storage, user, issued, storage.tokens, texts, provider.context.auth_server_url)


def authorization_server_metadata(issuer: str) -> dict[str, Any]:
    """The facade's RFC 8414 metadata for `issuer`: at the well-known URL built from it (RFC 8414 §3.1),
    or, for an issuer with a path (a REST API's stage), where clients look next: below the issuer."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    candidates = [f"{origin}/.well-known/oauth-authorization-server{path}"]
    if path:
        candidates += [
            f"{origin}{path}/.well-known/oauth-authorization-server",
            f"{origin}{path}/.well-known/openid-configuration",
        ]
    answers = []
    for url in candidates:
        response = httpx.get(url, timeout=10)
        if response.status_code == 200:
            document = dict(response.json())
            assert document["issuer"] == issuer.rstrip("/"), (url, document["issuer"])
            return document
        answers.append((url, response.status_code))
    raise AssertionError(f"no authorization server metadata for {issuer}: {answers}")


def verified_claims(access_token: str, metadata: dict[str, Any], audience: str) -> dict[str, Any]:
    """The claims of a facade access token, its ES256 signature checked with the facade's JWKS."""
    header = jwt.get_unverified_header(access_token)
    keys = httpx.get(metadata["jwks_uri"], timeout=10).json()["keys"]
    (key,) = [key for key in keys if key.get("kid") == header.get("kid")]
    signing_key = jwt.PyJWK.from_dict(key).key
    return dict(
        jwt.decode(access_token, signing_key, algorithms=["ES256"], audience=audience, issuer=metadata["issuer"])
    )


@dataclass(frozen=True)
class LoopbackTLS:
    """A certificate authority made for one test module and the certificate it issued to 127.0.0.1:
    `ca_file` is what a client trusts (`SSL_CERT_FILE`), `server_context` what a server presents."""

    ca_file: Path
    server_context: ssl.SSLContext


def _usage(**granted: bool) -> x509.KeyUsage:
    names = "digital_signature content_commitment key_encipherment data_encipherment key_agreement key_cert_sign"
    names += " crl_sign encipher_only decipher_only"
    return x509.KeyUsage(**{name: granted.get(name, False) for name in names.split()})


def loopback_tls(folder: Path) -> LoopbackTLS:
    """A one-day CA and a server certificate for IP 127.0.0.1 signed by it, written into `folder`."""
    now = datetime.now(UTC)

    def certificate(subject: str, key: ec.EllipticCurvePrivateKey) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "lambda-mcp test CA")]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        )

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = (
        certificate("lambda-mcp test CA", ca_key)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(key_cert_sign=True, crl_sign=True), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    leaf = (
        certificate("127.0.0.1", key)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(digital_signature=True), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_file, cert_file, key_file = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return LoopbackTLS(ca_file, context)


class _HttpsServer(ThreadingHTTPServer):
    """HTTPS on a free loopback port: each connection's TLS handshake runs in its own handler thread."""

    daemon_threads = True

    def __init__(self, serve: Callable[[BaseHTTPRequestHandler], None], context: ssl.SSLContext) -> None:
        self.serve, self.context = serve, context
        super().__init__(("127.0.0.1", 0), _Handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        request.settimeout(10)
        try:
            with self.context.wrap_socket(request, server_side=True) as tls:
                super().finish_request(tls, client_address)
        except OSError:  # a client that gave up, or refused the certificate
            return


class _Handler(BaseHTTPRequestHandler):
    server: _HttpsServer

    def do_GET(self) -> None:
        self.server.serve(self)

    def log_message(self, format: str, *args: Any) -> None:
        return


class MetadataDocument:
    """A client ID metadata document served over https on 127.0.0.1 with `tls`'s certificate (`url` is the
    client id); counts fetches."""

    def __init__(self, client_name: str, redirect_uri: str, tls: LoopbackTLS) -> None:
        self.fetches = 0
        self._server = _HttpsServer(self._serve, tls.server_context)
        self.url = f"https://127.0.0.1:{self._server.server_address[1]}/oauth/client.json"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.document = {
            "client_id": self.url,
            "client_name": client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        found = handler.path == "/oauth/client.json"
        self.fetches += found
        respond(handler, 200 if found else 404, json.dumps(self.document if found else {"error": "not found"}).encode())

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
