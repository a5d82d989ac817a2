"""A remote MCP server mounted under a prefix (`app.mount("https://.../mcp", prefix=...)`): its lists, kept
`list_ttl` seconds per process (and per caller when the mount sends the caller's token), prefixed; and
the tool, prompt and resource objects that forward a call to it. A server that cannot be reached fails
its own items with an error naming it; a list leaves its items out (and the rest of the list answers)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ...protocol.errors import INTERNAL_ERROR, MCPError
from ..errors import ToolError
from ..outbound.auth import CallerToken, ConnectionToken, OutboundAuth
from ..tools import Tool, forwarding_tool
from .client import MountClient, MountUnavailable
from .names import prefixed, prefixed_uri, unprefixed, unprefixed_uri
from .passthrough import Passthrough

if TYPE_CHECKING:
    from ..context import Context

logger = logging.getLogger("lambda_mcp")

Kind = Literal["tools", "prompts", "resources", "resourceTemplates"]
_LISTS: dict[str, str] = {
    "tools": "tools/list",
    "prompts": "prompts/list",
    "resources": "resources/list",
    "resourceTemplates": "resources/templates/list",
}
MAX_PAGES = 100
MAX_KEPT = 256


class RemoteMount:
    """One remote server under `prefix`."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str,
        auth: OutboundAuth | None,
        headers: dict[str, str],
        scopes: frozenset[str],
        protocol: str,
        list_ttl: float,
        timeout: float,
    ) -> None:
        self.url = url
        self.prefix = prefix
        self.scopes = scopes
        self.list_ttl = list_ttl
        self.label = f"the mounted server {prefix!r} ({url})"
        self.client = MountClient(url, label=self.label, auth=auth, headers=headers, protocol=protocol, timeout=timeout)
        self._per_caller = isinstance(auth, (CallerToken, ConnectionToken))
        self._kept: dict[tuple[str, str], tuple[float, list[dict[str, Any]]]] = {}
        self._named: dict[str, dict[str, dict[str, Any]]] = {"tools": {}, "prompts": {}}

    # -- lists ----------------------------------------------------------------------------------
    async def listed(self, kind: Kind, ctx: Context | None) -> list[dict[str, Any]]:
        """The server's `kind` items, prefixed (every page of them); `MountUnavailable` when it cannot say."""
        who = (ctx.principal or "") if self._per_caller and ctx is not None else ""
        kept = self._kept.get((kind, who))
        if kept is not None and kept[0] > time.monotonic():
            return kept[1]
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params = {"cursor": cursor} if cursor else {}
            try:
                page = await self.client.request(_LISTS[kind], params, ctx, Passthrough(ctx, self.prefix))
            except MCPError as exc:
                if exc.code == -32601:  # the server has none of these
                    break
                raise MountUnavailable(str(exc)) from None
            found = page.get(kind)
            items.extend(item for item in (found if isinstance(found, list) else []) if isinstance(item, dict))
            cursor = page.get("nextCursor") if isinstance(page.get("nextCursor"), str) else None
            if not cursor:
                break
        made = [shown for item in items if (shown := self._shown(kind, item)) is not None]
        if len(self._kept) >= MAX_KEPT:
            self._kept.pop(next(iter(self._kept)))
        self._kept[(kind, who)] = (time.monotonic() + self.list_ttl, made)
        if kind in ("tools", "prompts"):  # what a call of one by name is served with (the newest list's)
            self._named[kind].update((item["name"], item) for item in made)
        return made

    def _shown(self, kind: Kind, item: dict[str, Any]) -> dict[str, Any] | None:
        """`item` as the mount lists it (prefixed); None when it cannot be (a name too long, no URI scheme)."""
        if kind in ("tools", "prompts"):
            name = prefixed(self.prefix, str(item.get("name", "")))
            if name is None:
                return None
            shown = {**item, "name": name}
            if kind == "tools":
                shown.pop("execution", None)  # a mounted tool runs in the request, never as a task of ours
                meta = shown.get("_meta")
                ui = meta.get("ui") if isinstance(meta, dict) else None
                if isinstance(ui, dict) and isinstance(ui.get("resourceUri"), str):
                    moved = prefixed_uri(self.prefix, ui["resourceUri"])
                    shown["_meta"] = {**meta, "ui": {**ui, "resourceUri": moved or ui["resourceUri"]}}  # type: ignore[dict-item]
            return shown
        key = "uri" if kind == "resources" else "uriTemplate"
        uri = prefixed_uri(self.prefix, str(item.get(key, "")))
        return {**item, key: uri} if uri is not None else None

    # -- items ----------------------------------------------------------------------------------
    def serves(self, name: str) -> bool:
        """Whether the tool or prompt `name` is under this mount's prefix."""
        return unprefixed(self.prefix, name) is not None

    def tool(self, name: str) -> Tool | None:
        """The tool forwarding `name` (a `<prefix>_...` name) to the server, else None."""
        theirs = unprefixed(self.prefix, name)
        if theirs is None:
            return None
        definition = self._named["tools"].get(name) or {"name": name, "inputSchema": {"type": "object"}}

        async def forward(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
            try:
                params = {"name": theirs, "arguments": arguments}
                passed = Passthrough(ctx, self.prefix)
                return await self.client.request("tools/call", params, ctx, passed, routing=made.header_params)
            except MountUnavailable as exc:
                raise ToolError(f"{exc}") from None

        made = forwarding_tool(forward, definition, scopes=self.scopes)
        return made

    def prompt(self, name: str) -> MountedPrompt | None:
        theirs = unprefixed(self.prefix, name)
        if theirs is None:
            return None
        definition = self._named["prompts"].get(name) or {"name": name}
        return MountedPrompt(self, theirs, name, definition, self.scopes)

    def resource(self, uri: str) -> MountedResource | None:
        theirs = unprefixed_uri(self.prefix, uri)
        return MountedResource(self, theirs, self.scopes) if theirs is not None else None

    async def forwarded(self, method: str, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """`method` at the server; an unreachable server is an error naming it (not "unknown ...")."""
        try:
            return await self.client.request(method, params, ctx, Passthrough(ctx, self.prefix))
        except MountUnavailable as exc:
            raise MCPError(INTERNAL_ERROR, str(exc)) from None


@dataclass
class MountedPrompt:
    """A prompt of a mounted server (what `prompts/get` runs)."""

    mount: RemoteMount
    theirs: str
    name: str
    definition: dict[str, Any]
    scopes: frozenset[str] = field(default_factory=frozenset)

    async def get(self, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return await self.mount.forwarded("prompts/get", {"name": self.theirs, "arguments": arguments}, ctx)


@dataclass
class MountedResource:
    """A resource of a mounted server (what `resources/read` runs): its contents carry the prefixed URI."""

    mount: RemoteMount
    theirs: str
    scopes: frozenset[str] = field(default_factory=frozenset)
    ttl_ms: int = 0
    cache_scope: Literal["private", "public"] = "private"

    async def read(self, uri: str, variables: dict[str, str], ctx: Context) -> list[dict[str, Any]]:
        result = await self.mount.forwarded("resources/read", {"uri": self.theirs}, ctx)
        contents = result.get("contents")
        items = [item for item in (contents if isinstance(contents, list) else []) if isinstance(item, dict)]
        for item in items:
            if isinstance(item.get("uri"), str):
                item["uri"] = prefixed_uri(self.mount.prefix, item["uri"]) or item["uri"]
        return items
