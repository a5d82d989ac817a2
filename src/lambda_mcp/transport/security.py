"""Host and Origin allow-lists (DNS-rebinding protection): patterns like `127.0.0.1:*` or `*.example.com`."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Iterable

from starlette.requests import Request
from starlette.responses import Response

from ..protocol.errors import INVALID_REQUEST
from .replies import error_reply


def _literal_brackets(pattern: str) -> str:
    """`[` and `]` in a pattern are themselves (IPv6 hosts like `[::1]:*`), never fnmatch classes."""
    return "".join("[[]" if c == "[" else "[]]" if c == "]" else c for c in pattern)


END = "\\Z"  # what `fnmatch.translate` ends its expressions with


@functools.lru_cache(maxsize=64)
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regular expression for a tuple of patterns (built once per allow-list): `host:*` matches the
    host with any port or none."""
    parts = []
    for pattern in patterns:
        pattern = _literal_brackets(pattern.lower())
        port = pattern.endswith(":*")
        body = fnmatch.translate(pattern[:-2] if port else pattern).removesuffix(END)
        parts.append(f"(?:{body}(?::[^:]*)?)" if port else f"(?:{body})")
    return re.compile("(?s:" + "|".join(parts) + ")" + END) if parts else None


def _matches(value: str, patterns: Iterable[str]) -> bool:
    compiled = _compiled(tuple(patterns))
    return compiled is not None and compiled.match(value.lower()) is not None


def host_allowed(host: str | None, allowed: Iterable[str]) -> bool:
    return host is not None and _matches(host.strip(), allowed)


def origin_allowed(origin: str | None, allowed: Iterable[str]) -> bool:
    """An absent Origin (non-browser client) is allowed; a present one must be listed."""
    return origin is None or _matches(origin.strip(), allowed)


LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")


def check(
    request: Request, hosts: tuple[str, ...], origins: tuple[str, ...], trust_event_domain: bool
) -> Response | None:
    """403 for a Host or Origin not allowed. In Lambda the API's own domain (and pages served from it)
    is allowed too, unless `trust_event_domain` is off."""
    event = request.scope.get("aws.event")
    if trust_event_domain and isinstance(event, dict):
        domain = event.get("requestContext", {}).get("domainName")
        if isinstance(domain, str):
            hosts = (*hosts, domain, f"{domain}:*")
            origins = (*origins, f"https://{domain}", f"http://{domain}")
    if not host_allowed(request.headers.get("host"), hosts):
        return error_reply(403, INVALID_REQUEST, "Forbidden: Host header is not allowed")
    if not origin_allowed(request.headers.get("origin"), origins):
        return error_reply(403, INVALID_REQUEST, "Forbidden: Origin is not allowed")
    return None
