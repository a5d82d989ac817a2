"""Host and Origin allow-lists (DNS-rebinding protection): patterns like `127.0.0.1:*` or `*.example.com`."""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase


def _matches(value: str, patterns: Iterable[str]) -> bool:
    value = value.lower()
    for pattern in patterns:
        pattern = pattern.lower()
        if pattern.endswith(":*"):
            base = pattern[:-2]
            if fnmatchcase(value, base) or fnmatchcase(value.rsplit(":", 1)[0], base):
                return True
        elif fnmatchcase(value, pattern):
            return True
    return False


def host_allowed(host: str | None, allowed: Iterable[str]) -> bool:
    return host is not None and _matches(host.strip(), allowed)


def origin_allowed(origin: str | None, allowed: Iterable[str]) -> bool:
    """An absent Origin (non-browser client) is allowed; a present one must be listed."""
    return origin is None or _matches(origin.strip(), allowed)


LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
