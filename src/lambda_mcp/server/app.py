"""`MCPApp`: the object users decorate with tools, resources and prompts, and what it advertises."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from . import _signature, apps
from ._refusals import duplicate, refused
from .changes import ChangeFeed
from .completions import Completion
from .errors import DeclarationError
from .existing import ExistingTools
from .lifespan import Lifespan, LifespanFunction
from .middleware import Middleware
from .prompts import Prompt, build_prompt
from .resources import Resource, build_resource
from .tools import Tool, ToolDeclarations

if TYPE_CHECKING:
    from .connections import Connection
    from .mount.remote import MountedResource, RemoteMount

F = TypeVar("F", bound=Callable[..., Any])
L = TypeVar("L", bound=LifespanFunction)
M = TypeVar("M", bound=Middleware)


class MCPApp(ToolDeclarations, ExistingTools):
    """An MCP server definition: identity, instructions, and the registered tools, resources and prompts.

    ```python
    app = MCPApp("weather", version="1.0.0", instructions="...")

    @app.tool
    def add(a: int, b: int) -> int:
        "Add two integers."
        return a + b
    ```

    `@app.tool` and `@app.prompt` work bare or called (`@app.tool(title=...)`); `@app.resource` takes
    the URI. A decorator used wrongly, or a second tool, prompt or resource of the same name (URI), raises
    `DeclarationError` (a `TypeError`) at once: one line naming the file and line and what to write.
    """

    def __init__(
        self,
        name: str,
        *,
        version: str = "0.1.0",
        title: str | None = None,
        instructions: str | None = None,
        description: str | None = None,
        website_url: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        page_size: int = 50,
        list_ttl_ms: int = 300_000,
    ) -> None:
        self.name = name
        self.version = version
        self.title = title
        self.instructions = instructions
        self.description = description
        self.website_url = website_url
        self.icons = icons
        self.page_size = page_size
        self.list_ttl_ms = list_ttl_ms
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: dict[str, Resource] = {}
        self.prompts: dict[str, Prompt] = {}
        self.completion_handler: Completion | None = None
        self.changes = ChangeFeed()
        self._subscription_filter: Callable[[str, str | None], bool | Awaitable[bool]] | None = None
        self.lifespans = Lifespan(self)
        """The app's lifespan, entered once per execution environment (`@app.lifespan`)."""
        self.middlewares: list[Middleware] = []
        self.connections: dict[str, Connection] = {}
        """The OAuth providers tools call as the user (`app.connection`)."""
        self.mounts: list[RemoteMount] = []
        """Remote MCP servers served under a prefix (`app.mount`)."""

    # -- decorators (`@app.tool` comes from `ToolDeclarations`, in tools.py) ----------------
    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        size: int | None = None,
        meta: dict[str, Any] | None = None,
        scopes: Iterable[str] = (),
        ttl_ms: int = 0,
        cache_scope: Literal["private", "public"] = "private",
    ) -> Callable[[F], F]:
        """Register a resource at `uri`, or a URI template when `uri` contains `{var}` parts. `scopes`:
        OAuth scopes a caller needs to see, read and subscribe to it.

        `ttl_ms` and `cache_scope`: how long a 2026 client may reuse a read of it, and whether that
        copy may serve other users (`public`) or only this one (`private`). Reads are not cached
        (`ttl_ms=0`) unless the resource says so; lists are, for the app's `list_ttl_ms`."""
        _signature.needs_uri("resource", uri, "res://...")
        if ttl_ms < 0 or cache_scope not in ("private", "public"):
            raise refused(f"@app.resource({uri!r}): ttl_ms must be >= 0 and cache_scope 'private' or 'public'")

        def register(fn: F) -> F:
            _signature.decorated(fn, f"@app.resource({uri!r})")
            resource = build_resource(
                fn,
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                annotations=annotations,
                icons=icons,
                size=size,
                meta=meta,
            )
            resource.scopes = frozenset(scopes)
            resource.ttl_ms, resource.cache_scope = ttl_ms, cache_scope
            declared = self.templates if resource.is_template else self.resources
            if uri in declared:
                kind = "resource template" if resource.is_template else "resource"
                raise duplicate(kind, uri, declared[uri].fn, fn, "give each its own URI")
            declared[uri] = resource
            return fn

        return register

    def ui_resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        csp: dict[str, list[str]] | None = None,
        permissions: Iterable[str] = (),
        domain: str | None = None,
        prefers_border: bool | None = None,
        ttl_ms: int = 0,
        scopes: Iterable[str] = (),
    ) -> Callable[[F], F]:
        """Register an MCP App's HTML (`text/html;profile=mcp-app`) at a `ui://` URI: the function returns
        the HTML document. `csp` (`connectDomains`, `resourceDomains`, `frameDomains`,
        `baseUriDomains`), `permissions` (`camera`, `microphone`, `geolocation`, `clipboardWrite`),
        `domain` and `prefers_border` go to the host in the content's `_meta.ui`."""
        _signature.needs_uri("ui_resource", uri, "ui://...")
        content_meta = apps.resource_meta(uri, csp, permissions, domain, prefers_border)

        def register(fn: F) -> F:
            _signature.decorated(fn, f"@app.ui_resource({uri!r})")
            self.resource(
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=apps.MIME_TYPE,
                scopes=scopes,
                ttl_ms=ttl_ms,
                meta=content_meta,
            )(fn)
            self.resources[uri].content_meta = content_meta
            return fn

        return register

    @overload
    def prompt(self, fn: F, /) -> F: ...

    @overload
    def prompt(
        self,
        name_: str | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        arguments: dict[str, str] | None = None,
        scopes: Iterable[str] = (),
    ) -> Callable[[F], F]: ...

    def prompt(
        self,
        name_or_fn: str | Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        arguments: dict[str, str] | None = None,
        scopes: Iterable[str] = (),
    ) -> Callable[..., Any]:
        """Register a prompt (`@app.prompt`, `@app.prompt()` or `@app.prompt("name", ...)`); its arguments
        are the function's parameters, strings (`arguments` adds descriptions). `scopes`: OAuth scopes a
        caller needs to see and get it."""
        fn, name = _signature.named("prompt", name_or_fn, name)

        def register(fn: F) -> F:
            _signature.decorated(fn, "@app.prompt()")
            prompt = build_prompt(
                fn,
                name=name,
                title=title,
                description=description,
                icons=icons,
                meta=meta,
                argument_descriptions=arguments,
            )
            prompt.scopes = frozenset(scopes)
            if prompt.name in self.prompts:
                fix = 'give one of them another name: @app.prompt(name="...")'
                raise duplicate("prompt", prompt.name, self.prompts[prompt.name].fn, fn, fix)
            self.prompts[prompt.name] = prompt
            return fn

        return register if fn is None else register(fn)

    def completion(self) -> Callable[[F], F]:
        """Register `fn(ref, argument, context) -> list[str]` answering `completion/complete`; a parameter
        annotated `Context` gets the request's (`ctx.principal`, `ctx.scopes`)."""

        def register(fn: F) -> F:
            self.completion_handler = Completion(fn)
            return fn

        return register

    def subscription_filter(self) -> Callable[[F], F]:
        """Register `fn(uri, principal) -> bool` (or an async one) deciding who may subscribe to a resource
        (legacy `resources/subscribe`, 2026 `subscriptions/listen`): keep principals apart."""

        def register(fn: F) -> F:
            self._subscription_filter = fn
            return fn

        return register

    async def may_subscribe(self, uri: str, principal: str | None) -> bool:
        """Whether `principal` may subscribe to `uri`: the app's filter says so (everyone may, without one)."""
        if self._subscription_filter is None:
            return True
        allowed = self._subscription_filter(uri, principal)
        return bool(await allowed if inspect.isawaitable(allowed) else allowed)

    def lifespan(self, function: L) -> L:
        """Register the app's process-wide resources: an async context manager function of the app (or an
        async generator function, made into one) whose yielded value handlers read as `ctx.state`.

        ```python
        @app.lifespan
        async def resources(app: MCPApp) -> AsyncIterator[dict[str, Any]]:
            async with httpx.AsyncClient() as http:
                yield {"http": http}
        ```

        It runs once per execution environment: at cold start in Lambda (then every warm invocation
        reuses it), once per process in `lambda-mcp dev`, for each `async with Client(app)` in tests;
        never per request. Its clean-up runs at dev shutdown and at the end of the test client's block;
        in Lambda only when the runtime gets SIGTERM (see docs/guide.md, "Process-wide resources")."""
        self.lifespans.register(function)
        return function

    def middleware(self, function: M) -> M:
        """Register `async fn(request, call_next) -> result` around every request (see `server/middleware.py`);
        the first registered runs outermost."""
        self.middlewares.append(function)
        return function

    def connection(self, name: str, **declared: Any) -> Connection:
        """Declare an OAuth 2.0 provider that tools call as the user: `authorize_url`, `token_url`,
        `client_id`, `client_secret` (a value, or `secretsmanager:...` / `ssm:...`), `scopes`,
        `authorize_params`. Tools then ask for the caller's token with `await ctx.connection(name)`."""
        from .connections import declare  # an app without connections never loads them

        if name in self.connections:
            raise DeclarationError(f"connection {name!r} is declared twice")
        self.connections[name] = declare(name, **declared)
        return self.connections[name]

    # -- change notifications -------------------------------------------------------------
    async def notify_list_changed(self, kind: str) -> None:
        """Announce that the `tools`, `prompts` or `resources` list changed."""
        await self.changes.publish(kind, None)

    async def notify_resource_updated(self, uri: str, *, principal: str | None = None) -> None:
        """Announce that the resource at `uri` changed; with `principal`, only to that principal's listeners."""
        await self.changes.publish("resource", uri, principal)

    # -- scopes ---------------------------------------------------------------------------
    def scopes_for(self, method: str, params: dict[str, Any]) -> frozenset[str]:
        """The scopes a request needs for what it names (a tool, prompt or resource); empty otherwise."""
        name = params.get("name")
        if method == "tools/call" and isinstance(name, str):
            return self._declared_scopes(self.tools.get(name), name)
        if method == "prompts/get" and isinstance(name, str):
            return self._declared_scopes(self.prompts.get(name), name)
        uri = params.get("uri")
        if method in ("resources/read", "resources/subscribe") and isinstance(uri, str):
            found = self.resource_for(uri)
            return found[0].scopes if found is not None else frozenset()
        ref = params.get("ref")
        if method == "completion/complete" and isinstance(ref, dict):
            if ref.get("type") == "ref/prompt":
                name = ref.get("name")
                prompt = self.prompts.get(name) if isinstance(name, str) else None
                return prompt.scopes if prompt is not None else frozenset()
            target = ref.get("uri")
            if ref.get("type") == "ref/resource" and isinstance(target, str):
                named = self.templates.get(target) or self.resources.get(target)  # the template as declared
                found = (named, {}) if named is not None else self.resource_for(target)
                return found[0].scopes if found is not None else frozenset()
        return frozenset()

    def _declared_scopes(self, declared: Tool | Prompt | None, name: str) -> frozenset[str]:
        """The scopes of a tool or prompt: its own, else those of the remote server mounted under its prefix."""
        if declared is not None:
            return declared.scopes
        mount = self.mount_of(name) if self.mounts else None
        return mount.scopes if mount is not None else frozenset()

    def unmet_scopes(self, scopes: frozenset[str] | None, method: str, params: dict[str, Any]) -> frozenset[str]:
        """Empty when a caller holding `scopes` may do `method` on what `params` names (always, when
        `scopes` is None: auth `none`); else every scope that needs (what a 403 challenge names)."""
        needed = frozenset() if scopes is None else self.scopes_for(method, params)
        return needed if not needed <= (scopes or frozenset()) else frozenset()

    def scopes_supported(self) -> frozenset[str]:
        """Every scope a tool, resource or prompt names (advertised in the protected resource metadata)."""
        registered: list[Tool | Resource | Prompt] = [
            *self.tools.values(),
            *self.resources.values(),
            *self.templates.values(),
            *self.prompts.values(),
        ]
        return frozenset(scope for item in registered for scope in item.scopes)

    def resource_for(self, uri: str) -> tuple[Resource | MountedResource, dict[str, str]] | None:
        """The resource (or template) serving `uri`, with the template's variables."""
        for resource in (*self.resources.values(), *self.templates.values()):
            variables = resource.match(uri)
            if variables is not None:
                return resource, variables
        mounted = self.mounted_resource(uri) if self.mounts else None
        return (mounted, {}) if mounted is not None else None

    # -- what the server advertises -------------------------------------------------------
    def serves(self, kind: str) -> bool:
        """Whether the app has any `tools`, `resources` (or templates) or `prompts` (per request: cheap)."""
        if self.mounts:  # what a mounted server serves is known only by asking it
            return True
        if kind == "tools":
            return bool(self.tools)
        if kind == "resources":
            return bool(self.resources or self.templates)
        return bool(self.prompts)

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {"logging": {}, "completions": {}}
        if self.serves("tools"):
            caps["tools"] = {"listChanged": True}
        if self.serves("resources"):
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.serves("prompts"):
            caps["prompts"] = {"listChanged": True}
        if apps.uses_apps(self.tools.values(), self.resources.values()):
            caps["extensions"] = {apps.EXTENSION: {}}
        return caps

    def server_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"name": self.name, "version": self.version}
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("websiteUrl", self.website_url),
            ("icons", self.icons),
        ):
            if value:
                info[key] = value
        return info
