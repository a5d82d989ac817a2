"""Registered resources and URI templates: listing, matching a URI, and converting read results."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from typing import Any, Literal

from ..protocol.values import lean_dataclass
from . import _signature
from ._models import loaded_wire_types
from ._refusals import refused
from .context import Context

_VARIABLE = re.compile(r"\{([A-Za-z0-9_]+)\}")


@lean_dataclass  # a dataclass (server/mount/ copies resources with `dataclasses.replace`), built lean
class Resource:
    """A static resource (`uri`) or a template (`uri_template` with `{var}` parts)."""

    fn: Callable[..., Any]
    definition: dict[str, Any]
    context_param: str | None
    pattern: re.Pattern[str] | None = None
    mime_type: str | None = None
    scopes: frozenset[str] = frozenset()
    """OAuth scopes a caller needs to see, read and subscribe to it."""
    ttl_ms: int = 0
    """2026 `resources/read` cache hint: how long a client may reuse a read (0: not cached)."""
    cache_scope: Literal["private", "public"] = "private"
    """Whether a cached read may be shared between users (`public`) or only reused by this one."""
    content_meta: dict[str, Any] | None = None
    """`_meta` of each content item the kit builds (an MCP App's `ui` settings)."""

    @property
    def is_template(self) -> bool:
        return self.pattern is not None

    def match(self, uri: str) -> dict[str, str] | None:
        if self.pattern is None:
            return {} if uri == self.definition["uri"] else None
        found = self.pattern.fullmatch(uri)
        return found.groupdict() if found else None

    async def read(self, uri: str, variables: dict[str, str], ctx: Context) -> list[dict[str, Any]]:
        kwargs: dict[str, Any] = dict(variables)
        if self.context_param:
            kwargs[self.context_param] = ctx
        value = await _signature.call(self.fn, kwargs, in_thread=ctx.sync_in_thread)
        return self._contents(uri, value)

    def _contents(self, uri: str, value: Any) -> list[dict[str, Any]]:
        items = value if isinstance(value, list) else [value]
        contents: list[dict[str, Any]] = []
        wire = loaded_wire_types()
        resource_contents = (wire.TextResourceContents, wire.BlobResourceContents) if wire is not None else ()
        for item in items:
            if isinstance(item, resource_contents):
                contents.append(item.dump())
            elif isinstance(item, dict) and ("text" in item or "blob" in item):
                contents.append({"uri": uri, **item})
            elif isinstance(item, bytes):
                contents.append(self._with_mime({"uri": uri, "blob": base64.b64encode(item).decode()}))
            else:
                contents.append(self._with_mime({"uri": uri, "text": item if isinstance(item, str) else str(item)}))
        return contents

    def _with_mime(self, content: dict[str, Any]) -> dict[str, Any]:
        if self.mime_type:
            content["mimeType"] = self.mime_type
        if self.content_meta:
            content["_meta"] = self.content_meta
        return content


def build_resource(
    fn: Callable[..., Any],
    uri: str,
    *,
    name: str | None,
    title: str | None,
    description: str | None,
    mime_type: str | None,
    annotations: dict[str, Any] | None,
    icons: list[dict[str, Any]] | None,
    size: int | None,
    meta: dict[str, Any] | None,
) -> Resource:
    ctx_param = _signature.context_parameter(fn, _signature.type_hints(fn))
    is_template = bool(_VARIABLE.search(uri))
    definition: dict[str, Any] = {"uriTemplate" if is_template else "uri": uri, "name": name or fn.__name__}
    for key, value in (
        ("title", title),
        ("description", description if description is not None else (fn.__doc__ or "").strip() or None),
        ("mimeType", mime_type),
        ("annotations", annotations),
        ("icons", icons),
        ("_meta", meta),
    ):
        if value:
            definition[key] = value
    if size is not None and not is_template:
        definition["size"] = size
    pattern = _template_pattern(uri, fn) if is_template else None
    return Resource(fn=fn, definition=definition, context_param=ctx_param, pattern=pattern, mime_type=mime_type)


def _template_pattern(template: str, fn: Callable[..., Any]) -> re.Pattern[str]:
    """RFC 6570 level-1 templates: each `{var}` matches a non-empty run of characters other than `/`,
    `?`, `#` and the first character of the literal text after it. So every variable ends where the
    next literal begins and matching takes linear time in the URI's length, whatever the URI (a
    variable may then not contain that character: in `{name}.{ext}`, `a.b.c` gives name `a`,
    ext `b.c`). Adjacent variables (`{a}{b}`) are ambiguous and refused (a `DeclarationError`, which is
    a `ValueError`, naming `fn`'s place)."""
    pieces = _VARIABLE.split(template)  # literal, name, literal, name, ..., literal
    names = pieces[1::2]
    if len(set(names)) != len(names):
        raise refused(f"resource template {template!r} names a variable twice", fn)
    parts: list[str] = [re.escape(pieces[0])]
    for index, name in enumerate(names):
        after = pieces[2 * index + 2]
        if not after and index < len(names) - 1:
            raise refused(
                f"resource template {template!r} has adjacent variables {{{name}}}{{{names[index + 1]}}}:"
                " put literal text between them",
                fn,
            )
        stop = re.escape(after[0]) if after else ""
        parts.append(f"(?P<{name}>[^/?#{stop}]+)")
        parts.append(re.escape(after))
    return re.compile("".join(parts))
