"""Redirect URIs: which ones a client may register, how a requested one matches a registered one, and
how the consent page shows where the code will go.

A redirect URI is one of three kinds:

| kind | form | where the code goes |
|---|---|---|
| `web` | `https://host[:port]/…` | a web site, named by its ASCII host and port |
| `loopback` | `http://127.0.0.1`, `localhost` or `[::1]`, any port (RFC 8252 §7.3) | a program on this computer |
| `app` | a private-use scheme (`cursor://…`, `com.example.app:/cb`; RFC 8252 §7.1) | the app that claimed it |

Everything else is refused at registration (and in metadata documents): schemes a browser or the
operating system handles itself (`mailto:`, `tel:`, `ws:`, `intent:`, `ms-*:`, `web+*:` …), plain `http`
off loopback, fragments, credentials, backslashes, a port that is not one, and any character that is
not printable ASCII, so a host can never look like another one (`https://сlaude.ai` with a Cyrillic `с`).
A requested URI with such a character never matches (URL parsers drop tabs and newlines, so
`http://127.0.0.1:1/c\tb` would otherwise match `http://127.0.0.1:1/cb`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import SplitResult, urlsplit

from ..config import LOOPBACK_NAMES
from .errors import OAuthError

MAX_URI_CHARS = 2000
Kind = Literal["web", "loopback", "app"]

_HANDLED_SCHEMES = frozenset(
    {
        # code execution or local content
        *("javascript", "vbscript", "data", "file", "about", "blob", "filesystem", "view-source", "jar"),
        *("chrome", "chrome-extension", "chrome-search", "edge", "moz-extension", "resource", "content", "shell"),
        # handed to a mail, phone, chat or other system handler
        *("mailto", "tel", "sms", "smsto", "mms", "fax", "callto", "facetime", "facetime-audio", "skype", "sip"),
        *("sips", "xmpp", "gtalk", "im", "irc", "ircs", "news", "nntp", "snews", "geo", "maps", "webcal", "magnet"),
        *("bitcoin", "market", "itms", "itms-apps", "itms-services", "intent", "android-app", "search", "wtai"),
        # other network protocols a browser or the OS opens
        *("ws", "wss", "ftp", "ftps", "sftp", "ssh", "telnet", "gopher", "ldap", "ldaps", "smb", "nfs"),
        "afp",
    }
)
"""Schemes that are not a native app's own: never a redirect URI (`http` only as loopback, checked apart)."""
_HANDLED_PREFIXES = ("ms-", "microsoft-", "x-apple-", "web+", "search-ms", "chrome-", "android-")
_SCHEME = re.compile(r"[a-z][a-z0-9+.\-]*")
_HOST = re.compile(r"[a-z0-9]([a-z0-9\-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9\-]*[a-z0-9])?)*\.?|\[[0-9a-f:.]+\]")
_LOOPBACK_NETLOC = re.compile(r"(127\.0\.0\.1|localhost|\[::1\])(?::([0-9]{1,5}))?")


@dataclass(frozen=True)
class Destination:
    """Where a redirect URI sends the code, as the consent page shows it."""

    kind: Kind
    shown: str
    """`web`: `https://host:port`; `loopback`: `http://host:port`; `app`: the whole URI."""


def printable_ascii(uri: str) -> bool:
    return uri.isascii() and all(" " < ch < "\x7f" for ch in uri)


def _parts(uri: str) -> SplitResult:
    parts = urlsplit(uri)
    parts.port  # noqa: B018 - raises ValueError for a port that is not one (`:99999`, `:abc`)
    return parts


def _refuse(description: str) -> OAuthError:
    return OAuthError("invalid_redirect_uri", description)


def check_redirect_uri(uri: object) -> str:
    """A redirect URI a client may register (see the module's table); `OAuthError(invalid_redirect_uri)`."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI_CHARS:
        raise _refuse("a redirect URI must be a string of at most 2000 characters")
    if not printable_ascii(uri):
        raise _refuse("a redirect URI must be printable ASCII (a host in punycode), without spaces or controls")
    try:
        parts = _parts(uri)
    except ValueError:
        raise _refuse("a redirect URI is malformed (or its port is not a number from 1 to 65535)") from None
    scheme = parts.scheme.lower()
    if not _SCHEME.fullmatch(scheme) or "#" in uri:
        raise _refuse("a redirect URI must be absolute, without a fragment")
    if "@" in parts.netloc or "\\" in uri or "%" in parts.netloc:  # the page must name the host the browser visits
        raise _refuse("a redirect URI must carry no credentials, backslash or percent-encoded host")
    if scheme == "http":
        if _loopback(parts) is None:
            raise _refuse("an http redirect URI must be on loopback (127.0.0.1, localhost, [::1]) with a valid port")
        return uri
    if scheme == "https":
        host = (parts.netloc.rpartition(":")[0] if parts.port is not None else parts.netloc).lower()
        if not host or not _HOST.fullmatch(host) or parts.port == 0:
            raise _refuse("an https redirect URI must name a host")
        return uri
    if scheme in _HANDLED_SCHEMES or scheme.startswith(_HANDLED_PREFIXES):
        raise _refuse(f"a redirect URI may not use the {scheme}: scheme (a browser or the system handles it)")
    return uri


def _loopback(parts: SplitResult) -> tuple[str, str, str, str] | None:
    """A loopback `http` URI without its port: (host, path, query, fragment); None when it is not one."""
    found = _LOOPBACK_NETLOC.fullmatch(parts.netloc)
    if parts.scheme != "http" or found is None or (found[2] and not 0 < int(found[2]) < 65536):
        return None
    return found[1], parts.path, parts.query, parts.fragment


def _loopback_without_port(uri: str) -> tuple[str, str, str, str] | None:
    if "\\" in uri or not printable_ascii(uri):
        return None
    try:
        return _loopback(_parts(uri))
    except ValueError:
        return None


def redirect_matches(registered: str, requested: str) -> bool:
    """Exact, except that a loopback `http` URI matches on any port (RFC 8252 §7.3): nothing else may differ."""
    if not printable_ascii(requested):
        return False
    if registered == requested:
        return True
    a, b = _loopback_without_port(registered), _loopback_without_port(requested)
    return a is not None and a == b and not b[3]


def destination(uri: str) -> Destination:
    """How the consent page names where `uri` (a checked, matched redirect URI) sends the code."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        return Destination("app", uri)
    host = (parts.hostname or "").lower()
    shown_host = f"[{host}]" if ":" in host else host
    port = parts.port or (443 if scheme == "https" else 80)
    kind: Kind = "loopback" if scheme == "http" and host in LOOPBACK_NAMES else "web"
    return Destination(kind, f"{scheme}://{shown_host}:{port}")
