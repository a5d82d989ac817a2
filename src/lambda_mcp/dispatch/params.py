"""Reading a request's params: typed fields, size bounds, and what a caller's scopes let it see."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any

from ..protocol.errors import invalid_params
from ..protocol.limits import MAX_CLIENT_DATA_BYTES, MAX_META_BYTES, MAX_URI_CHARS
from ..server.prompts import Prompt
from ..server.resources import Resource
from ..server.tools import Tool
from ..storage.errors import NotFoundError
from ..storage.records import SessionRecord
from .context import RequestContext


def visible(items: dict[str, Tool] | dict[str, Resource] | dict[str, Prompt], request: RequestContext) -> list[Any]:
    """What lists show: the items the caller's scopes allow (everything when scopes are not enforced)."""
    return [item for item in items.values() if request.scopes is None or item.scopes <= request.scopes]


def session_of(request: RequestContext) -> SessionRecord:
    if request.session is None:
        raise invalid_params("This method needs an initialized session")
    return request.session


async def kept(write: Awaitable[None], what: str | None) -> None:
    """A write to the request's session. A session the kit does not keep (it runs stateless behind AgentCore
    Runtime, whose platform mints the ids) cannot hold `what`: a clear error; `what` None: nothing to keep."""
    try:
        await write
    except NotFoundError:
        if what is not None:
            raise invalid_params(f"This server runs stateless: its sessions keep no {what}") from None


def uri_of(params: dict[str, Any]) -> str:
    uri = string_of(params, "uri")
    if len(uri) > MAX_URI_CHARS:
        raise invalid_params(f"A resource URI has at most {MAX_URI_CHARS} characters")
    return uri


def within(value: Any, limit: int, request: RequestContext) -> bool:
    """Whether `value` takes at most `limit` bytes as JSON: measured only when the body could be bigger."""
    return 0 < request.body_bytes <= limit or json_size(value) <= limit


def json_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), default=str))


def string_of(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise invalid_params(f'"{key}" must be a string')
    return value


def check_sizes(params: dict[str, Any], request: RequestContext) -> None:
    """-32602 for a `_meta` over `MAX_META_BYTES`, or 2026 client capabilities over `MAX_CLIENT_DATA_BYTES`
    (a task or a suspended call stores them: what any request can make the kit keep stays bounded)."""
    meta = params.get("_meta")
    if isinstance(meta, dict) and not within(meta, MAX_META_BYTES, request):
        raise invalid_params(f"_meta takes more than {MAX_META_BYTES} bytes")
    if request.era == "modern" and not within(dict(request.client_capabilities), MAX_CLIENT_DATA_BYTES, request):
        raise invalid_params(f"the client capabilities take more than {MAX_CLIENT_DATA_BYTES} bytes")
