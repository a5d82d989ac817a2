"""Fetch a Client ID Metadata Document: the JSON a client publishes at its `client_id` URL.

The URL is the client's choice, so the fetch is guarded against server-side request forgery:
`https://` only; the host's addresses are resolved first and any private, loopback, link-local,
multicast, reserved or unspecified one refuses the fetch; the connection goes to the address that was
checked (a second DNS answer cannot swap it); no redirect is followed; the body is capped at
`MAX_BYTES` and the whole fetch at `TIMEOUT_SECONDS`. Only a deployment whose own MCP URL is on
loopback (local work and tests) may name a loopback document (`http://127.0.0.1:…` too), as it may
name a loopback upstream issuer. Blocking: callers run it in a worker thread.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import json
import socket
import ssl
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from ..config import LOOPBACK_NAMES

MAX_BYTES = 16_384
TIMEOUT_SECONDS = 5.0


class DocumentError(Exception):
    """The document cannot be used; the message is fixed text fit for the client (`invalid_client`)."""


def is_document_url(client_id: str) -> bool:
    """Whether a `client_id` names a metadata document (an `https://` or `http://` URL) rather than a
    client the facade registered."""
    return client_id.startswith(("https://", "http://"))


def _blocked(address: str, allow_loopback: bool) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.sixtofour is not None and _blocked(str(ip.sixtofour), False):
        return True  # 6to4 (2002::/16) wrapping a private or loopback IPv4 address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return not allow_loopback
    return bool(
        ip.is_private or ip.is_link_local or ip.is_multicast or ip.is_reserved or ip.is_unspecified or not ip.is_global
    )


def check_url(url: str, allow_loopback: bool) -> None:
    """Refuse a URL that cannot be a client id: not https (http only on loopback where allowed), no
    path, a fragment, credentials, or dot segments."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise DocumentError("the client_id URL is malformed") from None
    host = parts.hostname or ""
    loopback = host in LOOPBACK_NAMES
    if parts.scheme != "https" and not (parts.scheme == "http" and loopback and allow_loopback):
        raise DocumentError("a client_id URL must be https://")
    if loopback and not allow_loopback:
        raise DocumentError("the client_id URL points at a loopback address")
    if not host or parts.fragment or parts.username or parts.password or len(url) > 2048:
        raise DocumentError("the client_id URL must name a host, and carry no fragment or credentials")
    if parts.path in ("", "/") or "/./" in parts.path + "/" or "/../" in parts.path + "/":
        raise DocumentError("the client_id URL must have a path without dot segments")
    if port == 0:
        raise DocumentError("the client_id URL names port 0")


def _resolve(host: str, port: int, timeout: float) -> list[Any]:
    """`getaddrinfo`, which has no timeout of its own, given at most `timeout` (a slow resolver is left
    to finish in a daemon thread)."""
    found: list[Any] = []

    def run() -> None:
        with contextlib.suppress(OSError, UnicodeError):
            found.extend(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))

    resolver = threading.Thread(target=run, daemon=True)
    resolver.start()
    resolver.join(timeout)
    return [] if resolver.is_alive() else found


def _address(host: str, port: int, allow_loopback: bool, timeout: float = TIMEOUT_SECONDS) -> str:
    infos = _resolve(host, port, timeout)
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise DocumentError("the client_id URL's host does not resolve")
    if any(_blocked(address, allow_loopback) for address in addresses):
        raise DocumentError("the client_id URL resolves to a private, loopback or reserved address")
    return addresses[0]


class _Pinned:
    """What both connections share: the checked address, and a watchdog that bounds the whole exchange
    (connect, TLS, status line, headers, body), not only each read: at `timeout` it shuts the socket."""

    _address: str
    sock: Any
    expired = False

    def _cut(self) -> None:
        self.expired = True
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)

    def _open(self, port: int, timeout: float) -> socket.socket:
        sock = socket.create_connection((self._address, port), timeout)
        self.sock = sock  # before the TLS handshake, so the watchdog can cut that too
        if self.expired:
            raise TimeoutError("the fetch took too long")
        return sock


class _PinnedHTTPS(_Pinned, http.client.HTTPSConnection):
    """HTTPS to a checked address, with the certificate verified for the URL's host name."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        sock = self._open(self.port, self.timeout)  # type: ignore[arg-type]
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


class _PinnedHTTP(_Pinned, http.client.HTTPConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self._open(self.port, self.timeout)  # type: ignore[arg-type]


def fetch_document(url: str, allow_loopback: bool, timeout: float = TIMEOUT_SECONDS) -> tuple[dict[str, Any], int]:
    """The document at `url` and how long it may be cached (seconds, from `Cache-Control: max-age`)."""
    check_url(url, allow_loopback)
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname or ""
    started = time.monotonic()
    address = _address(host.strip("[]"), port, allow_loopback, timeout)
    timeout = max(timeout - (time.monotonic() - started), 0.05)
    kind = _PinnedHTTPS if parts.scheme == "https" else _PinnedHTTP
    connection = kind(host, port, address, timeout)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    watchdog = threading.Timer(timeout, connection._cut)
    watchdog.daemon = True
    watchdog.start()
    try:
        connection.request("GET", target, headers={"Accept": "application/json", "User-Agent": "lambda-mcp"})
        response = connection.getresponse()
        if 300 <= response.status < 400:
            raise DocumentError("the client_id URL redirects; a metadata document must be served at its own URL")
        if response.status != 200:
            raise DocumentError(f"the client_id URL answered HTTP {response.status}")
        body = _read(response, time.monotonic() + timeout)
        cache_control = response.getheader("Cache-Control") or ""
    except (OSError, http.client.HTTPException):
        if connection.expired:
            raise DocumentError("the client's metadata document took too long to arrive") from None
        raise DocumentError("the client's metadata document could not be fetched") from None
    finally:
        watchdog.cancel()
        connection.close()
    if connection.expired:  # cut while reading the body: what arrived is incomplete
        raise DocumentError("the client's metadata document took too long to arrive")
    if len(body) > MAX_BYTES:
        raise DocumentError(f"the client's metadata document is larger than {MAX_BYTES} bytes")
    try:
        document = json.loads(body)
    except ValueError:
        raise DocumentError("the client's metadata document is not JSON") from None
    if not isinstance(document, dict):
        raise DocumentError("the client's metadata document is not a JSON object")
    return document, _max_age(cache_control)


def _read(response: http.client.HTTPResponse, deadline: float) -> bytes:
    """At most `MAX_BYTES + 1` bytes, before `deadline`: a server trickling its answer cannot hold the fetch
    longer than its timeout."""
    body = b""
    while len(body) <= MAX_BYTES:
        if time.monotonic() > deadline:
            raise DocumentError("the client's metadata document took too long to arrive")
        chunk = response.read1(MAX_BYTES + 1 - len(body))
        if not chunk:
            break
        body += chunk
    return body


def _max_age(cache_control: str) -> int:
    for directive in cache_control.lower().split(","):
        name, _, value = directive.strip().partition("=")
        if name == "no-store" or name == "no-cache":
            return 0
        if name == "max-age" and value.strip().isdigit():
            return int(value.strip())
    return 3600
