"""The four list methods (`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`): the
app's own items the caller's scopes allow, then each mounted remote server's (asked with the caller's
`Context`, kept per process for the mount's `list_ttl`), paginated together with the kit's cursors. A
mounted server that cannot answer leaves its items out of the list, with a warning in the log."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..protocol import shaping
from ..server.app import MCPApp
from ..server.context import Context
from .context import Channel, RequestContext
from .pagination import page
from .params import visible
from .runner import HandlerRunner

if TYPE_CHECKING:
    from ..server.mount.remote import Kind

logger = logging.getLogger("lambda_mcp")


class Lists:
    """Answers the list methods for one app."""

    def __init__(self, app: MCPApp, runner: HandlerRunner) -> None:
        self.app = app
        self.runner = runner

    async def tools(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        own = [shaping.tool(t.definition, request.version) for t in visible(self.app.tools, request)]
        mounted = await self._mounted("tools", "tools/list", params, request, channel)
        return self._page("tools", own + [shaping.tool(d, request.version) for d in mounted], params)

    async def resources(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        own = [shaping.resource(r.definition, request.version) for r in visible(self.app.resources, request)]
        mounted = await self._mounted("resources", "resources/list", params, request, channel)
        return self._page("resources", own + [shaping.resource(d, request.version) for d in mounted], params)

    async def templates(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        own = [shaping.template(r.definition, request.version) for r in visible(self.app.templates, request)]
        mounted = await self._mounted("resourceTemplates", "resources/templates/list", params, request, channel)
        items = own + [shaping.template(d, request.version) for d in mounted]
        return self._page("resourceTemplates", items, params)

    async def prompts(self, params: dict[str, Any], request: RequestContext, channel: Channel) -> dict[str, Any]:
        own = [shaping.prompt(p.definition, request.version) for p in visible(self.app.prompts, request)]
        mounted = await self._mounted("prompts", "prompts/list", params, request, channel)
        return self._page("prompts", own + [shaping.prompt(d, request.version) for d in mounted], params)

    def _page(self, key: str, items: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
        chunk, next_cursor = page(items, params.get("cursor"), self.app.page_size)
        result: dict[str, Any] = {key: chunk}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    async def _mounted(
        self, kind: Kind, method: str, params: dict[str, Any], request: RequestContext, channel: Channel
    ) -> list[dict[str, Any]]:
        """The mounted remote servers' `kind` items the caller may see (none without mounts: no cost)."""
        mounts = [m for m in self.app.mounts if request.scopes is None or m.scopes <= request.scopes]
        if not mounts:
            return []
        from ..server.mount.client import MountUnavailable  # only an app that mounts a server loads it

        async def listed(ctx: Context) -> dict[str, Any]:
            found: list[dict[str, Any]] = []
            for mount in mounts:
                try:
                    found.extend(await mount.listed(kind, ctx))
                except MountUnavailable as exc:
                    logger.warning("%s left out of %s: %s", mount.label, method, exc)
            return {"items": found}

        plain = {key: value for key, value in params.items() if key != "cursor"}
        result = await self.runner.run(method, plain, request, channel, listed)
        items = result.get("items")
        return items if isinstance(items, list) else []
