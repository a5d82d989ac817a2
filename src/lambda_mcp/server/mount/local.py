"""Mounting another `MCPApp` of this process: its tools, prompts and resources are copied into the parent
under the prefix when `app.mount(child, prefix=...)` runs (declare the child's items first, as importing
its module does). They run as the parent's own: the parent's auth, scopes (plus the mount's), middleware,
tasks and logs; `ctx.state` is the child's lifespan's. The child's middleware and completion handler are
not used."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

from .. import _signature
from ..errors import DeclarationError
from ..resources import _template_pattern
from .names import prefixed, prefixed_uri


def mount_app(parent: Any, child: Any, prefix: str, scopes: frozenset[str]) -> None:
    """Copy `child`'s tools, prompts, resources and templates into `parent` under `prefix`, and its connections
    (a connection both declare must be the same). `DeclarationError` for a name or URI that cannot be
    prefixed or is taken."""
    if child is parent:
        raise DeclarationError("app.mount: an app cannot mount itself")
    state = child.lifespans if child.lifespans.registered else None
    for tool in child.tools.values():
        name = _name(prefix, tool.name, "tool")
        definition = {**tool.definition, "name": name}
        if isinstance(definition.get("_meta"), dict):
            definition["_meta"] = _ui_meta(prefix, definition["_meta"])
        _put(
            parent.tools,
            name,
            "tool",
            _moved(tool, state, name=name, definition=definition, scopes=tool.scopes | scopes),
        )
    for prompt in child.prompts.values():
        name = _name(prefix, prompt.name, "prompt")
        moved = _moved(prompt, state, name=name, definition={**prompt.definition, "name": name})
        _put(parent.prompts, name, "prompt", dataclasses.replace(moved, scopes=prompt.scopes | scopes))
    for kind, declared in (("uri", child.resources), ("uriTemplate", child.templates)):
        target = parent.resources if kind == "uri" else parent.templates
        for uri, resource in declared.items():
            mounted_uri = prefixed_uri(prefix, uri)
            if mounted_uri is None:
                raise DeclarationError(f"app.mount(prefix={prefix!r}): the resource {uri!r} has no scheme:// to prefix")
            changes: dict[str, Any] = {"definition": {**resource.definition, kind: mounted_uri}}
            if resource.is_template:
                changes["pattern"] = _template_pattern(mounted_uri, resource.fn)
            moved = _moved(resource, state, **changes)
            _put(target, mounted_uri, "resource", dataclasses.replace(moved, scopes=resource.scopes | scopes))
    for name, connection in child.connections.items():
        if parent.connections.setdefault(name, connection) != connection:
            raise DeclarationError(
                f"app.mount(prefix={prefix!r}): connection {name!r} is declared differently in each app"
            )


def _name(prefix: str, name: str, kind: str) -> str:
    made = prefixed(prefix, name)
    if made is None:
        raise DeclarationError(f"app.mount(prefix={prefix!r}): the {kind} name {prefix}_{name} is not a valid name")
    return made


def _put(target: dict[str, Any], key: str, kind: str, item: Any) -> None:
    if key in target:
        raise DeclarationError(f"app.mount: a {kind} {key!r} is already declared")
    target[key] = item


def _ui_meta(prefix: str, meta: dict[str, Any]) -> dict[str, Any]:
    """A tool's MCP Apps `_meta.ui.resourceUri` pointed at the mounted copy of the child's `ui://` resource."""
    ui = meta.get("ui")
    if not isinstance(ui, dict) or not isinstance(ui.get("resourceUri"), str):
        return meta
    moved = prefixed_uri(prefix, ui["resourceUri"])
    return {**meta, "ui": {**ui, "resourceUri": moved or ui["resourceUri"]}}


def _moved(item: Any, state: Any, **changes: Any) -> Any:
    """A copy of a tool, prompt or resource with `changes`; its handler sees the child's `ctx.state`."""
    if state is not None and item.context_param:
        changes["fn"] = _with_state(item.fn, item.context_param, state)
    return dataclasses.replace(item, **changes)


def _with_state(fn: Callable[..., Any], context_param: str, lifespan: Any) -> Callable[..., Any]:
    async def run(**kwargs: Any) -> Any:
        outer = kwargs[context_param]
        inner = copy.copy(outer)  # the same call (input keys, steps, hooks), another `state`
        inner.state = await lifespan.state()
        kwargs[context_param] = inner
        return await _signature.call(fn, kwargs, in_thread=outer.sync_in_thread)

    return run
