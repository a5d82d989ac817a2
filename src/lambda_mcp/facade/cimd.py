"""Fetch a Client ID Metadata Document: the JSON a client publishes at its `client_id` URL.

The URL is the client's choice, so the fetch is guarded against server-side request forgery:
`https://` on port 443 only, with no query string; the host's addresses are resolved first, and an
address in one of the special-purpose networks written below refuses the fetch; the connection goes to
the address that was checked (a second DNS answer cannot swap it); no redirect is followed; the body
is capped at `MAX_BYTES` and the whole fetch at `TIMEOUT_SECONDS`. Only a deployment whose own MCP URL
is on loopback (local work and tests) may name a loopback document (`http://127.0.0.1:…` too, on any
port), as it may name a loopback upstream issuer. Blocking: callers run it in a worker thread.

A refusal is a `DocumentError`: its `public` text is the same for every refusal, so an outsider learns
nothing of what the fetch saw; its `detail` says what went wrong, for the log.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import threading
import time
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address
from typing import Any
from urllib.parse import urlsplit

from ..config import LOOPBACK_NAMES

MAX_BYTES = 16_384
TIMEOUT_SECONDS = 2.0


class DocumentError(Exception):
    """The document cannot be used. `public` is the one text the client is told (`invalid_client`);
    `detail` (also `str(exc)`) says what the fetch saw, and belongs in the log only."""

    public = "the client's metadata document could not be used"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def is_document_url(client_id: str) -> bool:
    """Whether a `client_id` names a metadata document (an `https://` or `http://` URL) rather than a
    client the facade registered."""
    return client_id.startswith(("https://", "http://"))


# The networks a fetch never connects to, written out rather than taken from `ipaddress`'s `is_private`
# and `is_global`, whose tables differ between Python versions. Sources: the IANA IPv4 and IPv6
# Special-Purpose Address Registries (RFC 6890 and updates), the IANA IPv4 Multicast and IPv6 Address
# Space registries. Entries the registries call globally reachable (anycast services inside
# 192.0.0.0/24 and 2001::/23) are blocked anyway: no metadata document is served from them.
LOOPBACK_V4 = IPv4Network("127.0.0.0/8")
LOOPBACK_V6 = IPv6Address("::1")
BLOCKED_V4 = tuple(
    IPv4Network(network)
    for network in (
        "0.0.0.0/8",  # "this network"
        "10.0.0.0/8",  # private use
        "100.64.0.0/10",  # shared address space (carrier-grade NAT)
        "127.0.0.0/8",  # loopback (allowed for local work before this table is read)
        "169.254.0.0/16",  # link-local, the cloud metadata service among it
        "172.16.0.0/12",  # private use
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation (TEST-NET-1)
        "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
        "192.168.0.0/16",  # private use
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation (TEST-NET-2)
        "203.0.113.0/24",  # documentation (TEST-NET-3)
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved
        "255.255.255.255/32",  # limited broadcast
    )
)
# IPv6 global unicast is all inside 2000::/3; an address outside it is refused even if no entry below
# names it. Two prefixes carry an IPv4 address that the packet really goes to, and are judged by it
# instead (the IPv4 table): IPv4-mapped ::ffff:0:0/96 (a dual-stack socket speaks IPv4 to it) and the
# NAT64 well-known prefix 64:ff9b::/96 (what DNS64 answers in an IPv6-only subnet). The other
# transition forms are refused whole, whatever they carry, so they need no decoding: IPv4-compatible
# (deprecated), 6to4 and Teredo (they reach the carried address through relays the facade does not
# choose, and no metadata document host lives behind them).
GLOBAL_UNICAST_V6 = IPv6Network("2000::/3")
IPV4_MAPPED = IPv6Network("::ffff:0:0/96")
NAT64_WELL_KNOWN = IPv6Network("64:ff9b::/96")
BLOCKED_V6 = tuple(
    IPv6Network(network)
    for network in (
        "::/128",  # unspecified
        "::1/128",  # loopback (allowed for local work before this table is read)
        "::/96",  # IPv4-compatible (deprecated)
        "64:ff9b:1::/48",  # local-use IPv4/IPv6 translation
        "100::/64",  # discard-only
        "2001::/23",  # IETF protocol assignments: Teredo 2001::/32, benchmarking 2001:2::/48, ORCHID, ...
        "2001:db8::/32",  # documentation
        "2002::/16",  # 6to4
        "3fff::/20",  # documentation
        "5f00::/16",  # segment routing (SRv6) SIDs
        "fc00::/7",  # unique local, the cloud metadata service (fd00:ec2::254) among it
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)


def blocked_address(address: str, allow_loopback: bool) -> bool:
    """Whether a fetch must not connect to `address` (as `getaddrinfo` writes it, a zone id such as
    `fe80::1%eth0` included); loopback is allowed only with `allow_loopback`."""
    try:
        ip = ip_address(address.split("%", 1)[0])
    except ValueError:
        return True
    if isinstance(ip, IPv4Address):
        return _blocked_v4(ip, allow_loopback)
    if ip in IPV4_MAPPED:
        return _blocked_v4(IPv4Address(int(ip) & 0xFFFF_FFFF), allow_loopback)
    if ip in NAT64_WELL_KNOWN:  # a translator's loopback is not ours (RFC 6052 keeps the prefix global-only)
        return _blocked_v4(IPv4Address(int(ip) & 0xFFFF_FFFF), allow_loopback=False)
    if ip == LOOPBACK_V6:
        return not allow_loopback
    return ip not in GLOBAL_UNICAST_V6 or any(ip in network for network in BLOCKED_V6)


def _blocked_v4(ip: IPv4Address, allow_loopback: bool) -> bool:
    if ip in LOOPBACK_V4:
        return not allow_loopback
    return any(ip in network for network in BLOCKED_V4)


def check_url(url: str, allow_loopback: bool) -> None:
    """Refuse a URL that cannot be a client id: not https (http only on loopback where allowed), no
    path, a query string, a fragment, credentials, dot segments, or a port other than 443 (any port
    on loopback where allowed), or any character that is not printable ASCII (the request line is ASCII)."""
    if not url.isascii() or not all(" " < ch < "\x7f" for ch in url):
        raise DocumentError("the client_id URL must be printable ASCII")
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
    if "?" in url:  # an empty query ("…/c.json?") too: the document's client_id must be the URL fetched
        raise DocumentError("the client_id URL carries a query string")
    if parts.path in ("", "/") or "/./" in parts.path + "/" or "/../" in parts.path + "/":
        raise DocumentError("the client_id URL must have a path without dot segments")
    if port == 0 or (port not in (None, 443) and not (loopback and allow_loopback)):
        raise DocumentError(f"the client_id URL names port {port}; only 443 is fetched")


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
    for address in addresses:
        if blocked_address(address, allow_loopback):
            raise DocumentError(
                f"the client_id URL's host resolves to {address}, a private, loopback or reserved address"
            )
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
    watchdog = threading.Timer(timeout, connection._cut)
    watchdog.daemon = True
    watchdog.start()
    try:
        connection.request("GET", parts.path, headers={"Accept": "application/json", "User-Agent": "lambda-mcp"})
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
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
        raise DocumentError("the client's metadata document is not JSON (or nests too deep)") from None
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
        if name == "max-age" and value.strip().isascii() and value.strip().isdigit():
            return int(value.strip()[:9])  # at most 999,999,999 s: the caller caps it at a day anyway
    return 3600
