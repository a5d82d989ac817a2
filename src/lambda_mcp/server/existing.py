"""Tools a team already has, served beside its own: `app.openapi` (an API's operations), `app.mount`
(another MCP server's tools, resources and prompts under a prefix) and `app.lambda_tool` (a Lambda
function). Each is a tool like any other (scopes, middleware, logs and metrics, tasks, the test client);
what makes and runs them lives in `server.openapi`, `server.mount` and `server.lambda_tools`,
imported only by an app that uses them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ._refusals import refused

if TYPE_CHECKING:
    from .mount.remote import MountedPrompt, MountedResource, RemoteMount
    from .openapi.build import Report
    from .tools import Tool

TaskSupport = Literal["forbidden", "optional", "required"]


class ExistingTools:
    """`app.openapi`, `app.mount` and `app.lambda_tool`: how `MCPApp` brings in tools it did not declare."""

    tools: dict[str, Tool]
    mounts: list[RemoteMount]

    def openapi(
        self,
        spec: str | Path | Mapping[str, Any],
        *,
        base_url: str | None = None,
        auth: Any = None,
        tags: Iterable[str] = (),
        exclude_tags: Iterable[str] = (),
        paths: Iterable[str] = (),
        exclude_paths: Iterable[str] = (),
        methods: Iterable[str] = (),
        names: Mapping[str, str] | None = None,
        scopes: Mapping[str, Iterable[str]] | None = None,
        task_support: TaskSupport | Mapping[str, TaskSupport] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
    ) -> Report:
        """Serve each operation of an OpenAPI 3.0 or 3.1 document (a path, an `https://` URL, or the parsed
        dict; JSON or YAML) as a tool: named by its `operationId` (else method and path; `names` maps
        either to another name), described by its summary and description, its input schema from the
        parameters and request body, its output schema from the 2xx response's. Calls go to `base_url`
        (default: the document's first server) with `auth` (see `lambda_mcp.outbound`).

        `tags`/`paths`/`methods` keep only the operations they match (`paths`: shell patterns, `/pets/*`),
        `exclude_tags`/`exclude_paths` drop those they match; `scopes` maps a tool name to the OAuth
        scopes it needs (default: the operation's `security` requirement's); `task_support` (one value,
        or per tool name) lets a slow operation run as a task. Returns what was made and what was
        skipped and why (`lambda-mcp openapi check` prints the same)."""
        from .openapi.build import openapi_tools
        from .outbound.auth import outbound_auth

        report = openapi_tools(
            spec,
            base_url=base_url,
            auth=outbound_auth(auth, "app.openapi"),
            tags=tuple(tags),
            exclude_tags=tuple(exclude_tags),
            paths=tuple(paths),
            exclude_paths=tuple(exclude_paths),
            methods=tuple(methods),
            names=dict(names or {}),
            scopes={name: tuple(granted) for name, granted in (scopes or {}).items()},
            task_support=task_support,
            headers=dict(headers or {}),
            timeout=timeout,
        )
        for tool in report.tools:
            self._add_made(tool, "app.openapi")
        return report

    def mount(
        self,
        server: str | ExistingTools,
        *,
        prefix: str,
        auth: Any = None,
        headers: Mapping[str, str] | None = None,
        scopes: Iterable[str] = (),
        protocol: str = "auto",
        list_ttl: float = 60.0,
        timeout: float = 30.0,
    ) -> None:
        """Serve another MCP server's tools, resources and prompts under `prefix`: a remote Streamable
        HTTP endpoint (`https://.../mcp`, either protocol era; `auth` as in `lambda_mcp.outbound`) or
        another `MCPApp` in this process. Tool and prompt names become `<prefix>_<name>`, resource URIs
        `<scheme>://<prefix>/<rest>`. Calls, progress, cancellation and input requests (elicitation,
        sampling) pass through; `scopes` are needed to see and use any of them. A remote server's lists
        are kept `list_ttl` seconds per process; when it is down, its own items fail with an error
        naming it, and every other list still answers."""
        from .mount.names import checked_prefix

        chosen = checked_prefix(prefix, [m.prefix for m in self.mounts])
        if isinstance(server, str):
            from .mount.remote import RemoteMount
            from .outbound.auth import outbound_auth

            self.mounts.append(
                RemoteMount(
                    server,
                    prefix=chosen,
                    auth=outbound_auth(auth, f"app.mount({server!r})"),
                    headers=dict(headers or {}),
                    scopes=frozenset(scopes),
                    protocol=protocol,
                    list_ttl=list_ttl,
                    timeout=timeout,
                )
            )
            return
        from .mount.local import mount_app

        mount_app(self, server, chosen, frozenset(scopes))

    def lambda_tool(
        self,
        name: str,
        *,
        function: str,
        input_schema: dict[str, Any] | None = None,
        description: str | None = None,
        title: str | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        scopes: Iterable[str] = (),
        task_support: TaskSupport | None = None,
        qualifier: str | None = None,
    ) -> None:
        """Serve a Lambda function as the tool `name`: each call invokes `function` (a name, an ARN, or
        `name:alias`) synchronously with exactly the call's arguments as its event, and the caller's
        principal in the client context (`context.client_context.custom["principal"]`). Its response is
        the result (a dict with `content` is served as it is; with `output_schema`, the structured
        content); a function error is a tool error. `input_schema` defaults to any object."""
        from .lambda_tools import lambda_tool

        tool = lambda_tool(
            name,
            function=function,
            input_schema=input_schema,
            description=description,
            title=title,
            output_schema=output_schema,
            annotations=annotations,
            scopes=tuple(scopes),
            task_support=task_support,
            qualifier=qualifier,
        )
        self._add_made(tool, "app.lambda_tool")

    # -- what the mounted remote servers serve (looked up by prefix, no list needed) -------------
    def mount_of(self, name: str) -> RemoteMount | None:
        """The remote server mounted under the prefix of the tool or prompt `name`, if any."""
        return next((mount for mount in self.mounts if mount.serves(name)), None)

    def mounted_tool(self, name: str) -> Tool | None:
        """The tool forwarding `name` to the remote server mounted under its prefix, if any."""
        return next((found for mount in self.mounts if (found := mount.tool(name)) is not None), None)

    def mounted_prompt(self, name: str) -> MountedPrompt | None:
        return next((found for mount in self.mounts if (found := mount.prompt(name)) is not None), None)

    def mounted_resource(self, uri: str) -> MountedResource | None:
        return next((found for mount in self.mounts if (found := mount.resource(uri)) is not None), None)

    def _add_made(self, tool: Tool, origin: str) -> None:
        if tool.name in self.tools:
            raise refused(f"{origin}: a tool named {tool.name!r} is already declared; give one of them another name")
        self.tools[tool.name] = tool
