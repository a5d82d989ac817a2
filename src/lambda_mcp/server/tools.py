"""Tools: declaring them (`@app.tool`), the definition clients list, argument validation, and result conversion."""

from __future__ import annotations

import base64
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from ..observe.invocation import count, milliseconds
from ..protocol.errors import KitFailure, MCPError
from ..protocol.values import lean_dataclass
from . import _signature, apps
from ._models import loaded_pydantic, loaded_wire_types
from ._refusals import duplicate, refused
from .arguments import Arguments, InvalidArguments
from .context import ClientError, Context
from .errors import ToolError

if TYPE_CHECKING:
    from pydantic import TypeAdapter

logger = logging.getLogger("lambda_mcp")
F = TypeVar("F", bound=Callable[..., Any])
Forward = Callable[[dict[str, Any], Context], Awaitable[Any]]


@lean_dataclass  # a dataclass (server/mount/ copies tools with `dataclasses.replace`), built lean
class Tool:
    """One tool: its wire definition and the function that runs it."""

    fn: Callable[..., Any]
    name: str
    definition: dict[str, Any]
    arguments: Arguments | None
    context_param: str | None
    structured: bool
    output_adapter: TypeAdapter[Any] | None = None
    wrap_output: bool = False
    """Structured output of a non-object type travels as `{"result": value}`."""
    header_params: dict[str, str] = field(default_factory=dict)
    """Mcp-Param-<Name> header name (lower-cased) -> argument name, from `x-mcp-header` properties."""
    defer_task: bool = False
    """The call runs inline until the tool calls `ctx.start_task()` (MRTR rounds first, then the task)."""
    scopes: frozenset[str] = frozenset()
    """OAuth scopes a caller needs to see and call it."""
    forward: Forward | None = None
    """Runs the call instead of `fn` (a tool the kit made from an API, a mounted server, a Lambda function):
    gets the arguments as the client sent them (validated against `definition` by the other end) and the
    context, and returns a result dict or a value converted like any tool's."""

    @functools.cached_property
    def task_support(self) -> str:
        """`forbidden` (the default), `optional` or `required`, from `execution.taskSupport`."""
        execution = self.definition.get("execution") or {}
        support = execution.get("taskSupport") if isinstance(execution, dict) else None
        return support if support in ("optional", "required") else "forbidden"

    async def run(self, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """Run the tool; tool failures become `isError` results, `MCPError` propagates. A `ToolError`'s
        message is for the user; a `ClientError` (the client answered the tool's question with an error)
        is an error result naming the refusal, logged as a warning; any other exception is logged with
        its traceback and the client gets a generic message with a reference to find it in the logs.
        Counts `ToolCalls`, `ToolErrors` and `ToolLatency` (a run that suspends to ask the client counts
        when it finally ends)."""
        started = time.perf_counter()
        try:
            kwargs = self._validate(arguments)
        except InvalidArguments as exc:
            return self._measured(started, error_result(f"Invalid arguments for tool {self.name}: {exc}"))
        if self.context_param:
            kwargs[self.context_param] = ctx
        try:
            if self.forward is not None:
                value = await self.forward(kwargs, ctx)
            else:
                value = await _signature.call(self.fn, kwargs, in_thread=ctx.sync_in_thread)
        except KitFailure:  # the kit's own storage (or queue) failing under ctx: not the tool's failure
            raise
        except MCPError:
            self._measured(started, {"isError": True})
            raise
        except ToolError as exc:
            return self._measured(started, error_result(str(exc) or f"The tool {self.name} failed"))
        except ClientError as exc:  # the client refused what the tool asked of it: no bug of the server's
            refusal = client_refusal(self.name, exc)
            logger.warning("%s", refusal)
            return self._measured(started, error_result(refusal))
        except Exception:
            import secrets  # only on this path: it costs a cold start ~2 ms

            reference = secrets.token_hex(4)
            logger.exception(
                "tool %s failed (reference %s)", self.name, reference, extra={"error_reference": reference}
            )
            message = f"The tool {self.name} failed unexpectedly (reference {reference})"
            return self._measured(started, error_result(message))
        return self._measured(started, self._to_result(value))

    def _measured(self, started: float, result: dict[str, Any]) -> dict[str, Any]:
        count("ToolCalls", tool=self.name)
        if result.get("isError") is True:
            count("ToolErrors", tool=self.name)
        milliseconds("ToolLatency", (time.perf_counter() - started) * 1000, tool=self.name)
        return result

    def _validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.arguments is None:
            return dict(arguments)
        return self.arguments.validate(arguments)

    def _to_result(self, value: Any) -> dict[str, Any]:
        wire = loaded_wire_types()
        if wire is not None and isinstance(value, wire.CallToolResult):
            dumped: dict[str, Any] = value.dump()
            return dumped
        if isinstance(value, dict) and "content" in value and isinstance(value["content"], list):
            return value
        if self.structured:
            structured = self.output_adapter.dump_python(value, mode="json") if self.output_adapter else value
            if self.wrap_output:
                structured = {"result": structured}
            return {"content": [{"type": "text", "text": json.dumps(structured)}], "structuredContent": structured}
        return {"content": to_content(value)}


class ToolDeclarations:
    """`@app.tool`: how `MCPApp` declares tools (kept in its `tools`)."""

    tools: dict[str, Tool]

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self,
        name_: str | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        structured_output: bool = False,
        meta: dict[str, Any] | None = None,
        execution: dict[str, Any] | None = None,
        task_support: Literal["forbidden", "optional", "required"] | None = None,
        defer_task: bool = False,
        scopes: Iterable[str] = (),
        ui: str | None = None,
        ui_visibility: Sequence[Literal["model", "app"]] | None = None,
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        name_or_fn: str | Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        structured_output: bool = False,
        meta: dict[str, Any] | None = None,
        execution: dict[str, Any] | None = None,
        task_support: Literal["forbidden", "optional", "required"] | None = None,
        defer_task: bool = False,
        scopes: Iterable[str] = (),
        ui: str | None = None,
        ui_visibility: Sequence[Literal["model", "app"]] | None = None,
    ) -> Callable[..., Any]:
        """Register a tool: `@app.tool`, `@app.tool()` or `@app.tool("name", ...)`. The input schema comes
        from the type hints unless `input_schema` is given (then it is served exactly as written and
        arguments are passed through unvalidated). A misuse, a parameter the kit cannot serve
        (`*args`, `**kwargs`, a type without JSON Schema) or a second tool of the same name is a
        `DeclarationError` (a `TypeError`) at once, naming the file and line.

        `task_support` (`execution.taskSupport`): `optional` tools run as tasks when the client
        supports them and synchronously otherwise; `required` tools only run as tasks. With
        `defer_task=True` the call runs inline (answering MRTR rounds) until the tool calls
        `ctx.start_task()`.

        `scopes`: OAuth scopes a caller's token must grant to see and call the tool (auth `jwt` or
        `gateway`); a call without them is answered 403 `insufficient_scope`. Under auth `none` they
        are not enforced (a warning at start says so).

        `ui`: the `ui://` resource (`@app.ui_resource`) an MCP Apps host renders for the tool's results;
        `ui_visibility`: who may call it, `["model", "app"]` by default (`["app"]`: only the UI).
        """
        fn, name = _signature.named("tool", name_or_fn, name)
        if task_support is not None:
            execution = {**(execution or {}), "taskSupport": task_support}
        if ui is not None:
            meta = {**(meta or {}), **apps.tool_meta(ui, ui_visibility)}

        def register(fn: F) -> F:
            _signature.decorated(fn, "@app.tool()")
            tool = build_tool(
                fn,
                name=name,
                title=title,
                description=description,
                annotations=annotations,
                icons=icons,
                input_schema=input_schema,
                output_schema=output_schema,
                structured_output=structured_output,
                meta=meta,
                execution=execution,
            )
            tool.defer_task = defer_task
            tool.scopes = frozenset(scopes)
            if tool.name in self.tools:
                fix = 'give one of them another name: @app.tool(name="...")'
                raise duplicate("tool", tool.name, self.tools[tool.name].fn, fn, fix)
            self.tools[tool.name] = tool
            return fn

        return register if fn is None else register(fn)


def forwarding_tool(
    forward: Forward,
    definition: dict[str, Any],
    *,
    scopes: Iterable[str] = (),
    structured: bool = False,
) -> Tool:
    """A tool the kit made (not declared with `@app.tool`): `definition` is served as it is and `forward`
    runs each call. `structured`: a plain value it returns is `structuredContent` (its `outputSchema`)."""
    return Tool(
        fn=forward,
        name=definition["name"],
        definition=definition,
        arguments=None,
        context_param=None,
        structured=structured,
        header_params=_header_params(definition.get("inputSchema") or {}),
        scopes=frozenset(scopes),
        forward=forward,
    )


def error_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def client_refusal(tool: str, exc: ClientError) -> str:
    """What the client and the log are told when the client answered the tool's request with an error."""
    asked = exc.method or "input"
    return f"The tool {tool} asked the client for {asked}, and the client refused (error {exc.code}: {exc.message})"


def to_content(value: Any) -> list[dict[str, Any]]:
    """Convert a handler's return value into content blocks."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [block for item in value for block in to_content(item)]
    wire = loaded_wire_types()
    if wire is not None and isinstance(value, wire.CONTENT_BLOCKS):
        return [value.dump()]
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return [value]
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if type(value) is int:  # what json.dumps gives, without an encoder
        return [{"type": "text", "text": str(value)}]
    if isinstance(value, bytes):
        return [{"type": "text", "text": base64.b64encode(value).decode()}]
    pydantic = loaded_pydantic()
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return [{"type": "text", "text": value.model_dump_json(by_alias=True, exclude_none=True)}]
    return [{"type": "text", "text": json.dumps(value, default=str)}]


def build_tool(
    fn: Callable[..., Any],
    *,
    name: str | None,
    title: str | None,
    description: str | None,
    annotations: dict[str, Any] | None,
    icons: list[dict[str, Any]] | None,
    input_schema: dict[str, Any] | None,
    output_schema: dict[str, Any] | None,
    structured_output: bool,
    meta: dict[str, Any] | None,
    execution: dict[str, Any] | None,
) -> Tool:
    """The tool `fn` serves; `DeclarationError` (one line, naming the tool) for a signature it cannot serve:
    `*args`, `**kwargs` (allowed with an explicit `input_schema`) or a type that has no JSON Schema."""
    hints = _signature.type_hints(fn)
    ctx_param = _signature.context_parameter(fn, hints)
    tool_name = name or fn.__name__
    owner = f"tool {tool_name!r}"
    if input_schema is None:
        _signature.refuse_variadic(fn, owner)
    args = Arguments(fn, hints, ctx_param, owner) if input_schema is None else None
    schema = args.schema if args is not None else input_schema or {}
    definition: dict[str, Any] = {"name": tool_name, "inputSchema": schema}
    if title:
        definition["title"] = title
    doc = description if description is not None else (fn.__doc__ or "").strip()
    if doc:
        definition["description"] = doc
    adapter: TypeAdapter[Any] | None = None
    wrap = False
    structured = structured_output or output_schema is not None
    if output_schema is not None:
        definition["outputSchema"] = output_schema
    elif structured_output:
        from pydantic import TypeAdapter

        returns = hints.get("return", Any)
        try:
            adapter = TypeAdapter(returns)
            derived = adapter.json_schema()
        except Exception:
            raise refused(
                f"{owner}: its return type {_signature.type_name(returns)} has no JSON Schema, which"
                " structured_output=True needs; return a pydantic model, a dataclass, a TypedDict or JSON types",
                fn,
                "return",
            ) from None
        if derived.get("type") != "object":
            defs = derived.pop("$defs", None)
            derived = {"type": "object", "properties": {"result": derived}, "required": ["result"]}
            if defs:
                derived["$defs"] = defs
            wrap = True
        definition["outputSchema"] = derived
    if annotations:
        definition["annotations"] = annotations
    if icons:
        definition["icons"] = icons
    if execution:
        definition["execution"] = execution
    if meta:
        definition["_meta"] = meta
    return Tool(
        fn=fn,
        name=tool_name,
        definition=definition,
        arguments=args,
        context_param=ctx_param,
        structured=structured,
        output_adapter=adapter,
        wrap_output=wrap,
        header_params=_header_params(schema),
    )


def _header_params(schema: dict[str, Any]) -> dict[str, str]:
    """Top-level properties marked `x-mcp-header` (the only reachable kind the kit routes)."""
    found: dict[str, str] = {}
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for arg, prop in properties.items():
            if isinstance(prop, dict) and isinstance(prop.get("x-mcp-header"), str):
                found[prop["x-mcp-header"].lower()] = arg
    return found
