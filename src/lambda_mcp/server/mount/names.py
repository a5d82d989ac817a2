"""How a mounted server's names and URIs are prefixed, and read back: tools and prompts `<prefix>_<name>`,
resource URIs `<scheme>://<prefix>/<rest>` (URI templates alike)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ...protocol.names import is_tool_name
from ..errors import DeclarationError

_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,31}$")


def checked_prefix(prefix: str, taken: Iterable[str]) -> str:
    """`prefix` when it is 1-32 letters, digits and `-` (no `_`: a name splits at its first `_`) and not
    taken by another mount; else `DeclarationError`."""
    if not isinstance(prefix, str) or not _PREFIX.match(prefix):
        raise DeclarationError(
            f"app.mount(prefix={prefix!r}): a prefix is 1-32 letters, digits and '-', starting with a letter or digit"
        )
    if prefix in set(taken):
        raise DeclarationError(f"app.mount(prefix={prefix!r}): another server is already mounted under that prefix")
    return prefix


def prefixed(prefix: str, name: str) -> str | None:
    """`<prefix>_<name>`, or None when that is not a valid tool name (too long, a character the rules forbid)."""
    made = f"{prefix}_{name}"
    return made if is_tool_name(made) else None


def unprefixed(prefix: str, name: str) -> str | None:
    """The mounted server's own name for `name`, when `name` is under `prefix`."""
    head = prefix + "_"
    return name[len(head) :] if name.startswith(head) and len(name) > len(head) else None


def prefixed_uri(prefix: str, uri: str) -> str | None:
    """`scheme://rest` -> `scheme://<prefix>/rest`; None for a URI without `://` (not mountable)."""
    scheme, separator, rest = uri.partition("://")
    return f"{scheme}://{prefix}/{rest}" if separator and scheme else None


def unprefixed_uri(prefix: str, uri: str) -> str | None:
    """The mounted server's own URI for `uri`, when `uri` is under `prefix`."""
    scheme, separator, rest = uri.partition("://")
    head = prefix + "/"
    if not separator or not scheme or not rest.startswith(head):
        return None
    return f"{scheme}://{rest[len(head) :]}"
