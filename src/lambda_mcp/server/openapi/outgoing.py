"""A call's arguments as the HTTP request its operation takes: path parameters percent-encoded into the path
(`simple`, `label`, `matrix`), query parameters (`form`, arrays exploded by default; `spaceDelimited`,
`pipeDelimited`, `deepObject`), header and cookie parameters, and a JSON or form body. A null argument is
one not given; a missing required one is a `ToolError` naming it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from ..errors import ToolError
from .inputs import Param, Plan
from .media import is_form

_TEMPLATE = re.compile(r"\{([^{}]+)\}")
_PATH_SAFE = "/:@!$&'()*+,;=-._~"


@dataclass(frozen=True)
class Request:
    """What is sent, exactly as it is signed."""

    url: str
    headers: dict[str, str]
    body: bytes


def request(
    plan: Plan, base_url: str, path: str, arguments: Mapping[str, Any], fixed: Mapping[str, str], accept: str | None
) -> Request:
    """The request for `arguments`; `fixed` headers (`headers=` of `app.openapi`) win over header parameters."""
    given = {name: value for name, value in arguments.items() if value is not None}
    missing = [name for name in plan.required if name not in given]
    if missing:
        raise ToolError(f"missing required argument{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
    by_name = {p.name: p for p in plan.params if p.location == "path"}
    parts = _TEMPLATE.split(path)  # literal, variable, literal, ...
    for n, part in enumerate(parts):
        if n % 2:
            param = by_name[part]
            parts[n] = _path_value(param, given[param.argument])
        else:
            parts[n] = quote(part, safe=_PATH_SAFE)
    url = base_url + "".join(parts)
    query = [pair for p in plan.params if p.location == "query" and p.argument in given for pair in _query(p, given)]
    if query:
        url += "?" + "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in query)
    headers: dict[str, str] = {}
    for param in plan.params:
        if param.location == "header" and param.argument in given:
            headers[param.name] = _header_text(param.argument, _simple(param, given[param.argument]))
    cookies = [c for p in plan.params if p.location == "cookie" and p.argument in given for c in _cookies(p, given)]
    if cookies:
        headers["Cookie"] = _header_text("cookie", "; ".join(cookies))
    for name, value in fixed.items():
        _set(headers, name, value)
    body, media_type = _body(plan, given)
    if media_type is not None:
        _set(headers, "Content-Type", media_type)
    if accept is not None and not any(name.lower() == "accept" for name in headers):
        headers["Accept"] = accept
    return Request(url, headers, body)


def authority(url: str) -> str:
    """`host[:port]` of `url`, without any user info: what messages and resource URIs name."""
    parts = urlsplit(url)
    host = str(parts.hostname)
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{parts.port}" if parts.port else host


def _set(headers: dict[str, str], name: str, value: str) -> None:
    for existing in [n for n in headers if n.lower() == name.lower()]:
        del headers[existing]
    headers[name] = value


def _text(value: Any) -> str:
    """A value's text in a URL or header: `true`/`false`, numbers as JSON writes them, objects as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _flat(value: Mapping[str, Any], joiner: str) -> list[str]:
    """An object's members: `k=v` each (joiner `=`), or `k`, `v`, ... (joiner `,`)."""
    if joiner == "=":
        return [f"{k}={_text(v)}" for k, v in value.items()]
    return [part for k, v in value.items() for part in (str(k), _text(v))]


def _path_value(param: Param, value: Any) -> str:
    """The path segment for `value`: `simple` (`a,b`), `label` (`.a.b`) or `matrix` (`;id=a,b`)."""
    if isinstance(value, str) and value in ("", ".", ".."):
        raise ToolError(f"the path parameter {param.argument} cannot be {value!r}")
    if param.as_json:
        return quote(_text(value), safe="")
    if isinstance(value, Mapping):
        pairs = [(quote(str(k), safe=""), quote(_text(v), safe="")) for k, v in value.items()]
        items = [f"{k}={v}" for k, v in pairs] if param.explode else [x for pair in pairs for x in pair]
    else:
        items = [quote(_text(v), safe="") for v in (value if isinstance(value, list) else [value])]
    name = quote(param.name, safe="")
    if param.style == "label":
        return "." + ("." if param.explode else ",").join(items)
    if param.style == "matrix":
        if not param.explode:
            return f";{name}=" + ",".join(items)
        return "".join(f";{item}" if isinstance(value, Mapping) else f";{name}={item}" for item in items)
    return ",".join(items)


def _query(param: Param, given: Mapping[str, Any]) -> list[tuple[str, str]]:
    value = given[param.argument]
    if param.as_json:
        return [(param.name, _text(value))]
    if isinstance(value, list):
        if param.explode:
            return [(param.name, _text(v)) for v in value]
        joiner = {"spaceDelimited": " ", "pipeDelimited": "|"}.get(param.style, ",")
        return [(param.name, joiner.join(_text(v) for v in value))]
    if isinstance(value, Mapping):
        if param.style == "deepObject":
            return [(f"{param.name}[{k}]", _text(v)) for k, v in value.items()]
        if param.explode:
            return [(str(k), _text(v)) for k, v in value.items()]
        return [(param.name, ",".join(_flat(value, ",")))]
    return [(param.name, _text(value))]


def _simple(param: Param, value: Any) -> str:
    if param.as_json:
        return _text(value)
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    if isinstance(value, Mapping):
        return ",".join(_flat(value, "=" if param.explode else ","))
    return _text(value)


def _cookies(param: Param, given: Mapping[str, Any]) -> list[str]:
    value = given[param.argument]
    name = quote(param.name, safe="")
    if isinstance(value, list) and param.explode and not param.as_json:
        return [f"{name}={quote(_text(v), safe='')}" for v in value]
    return [f"{name}={quote(_simple(param, value), safe='')}"]


def _header_text(argument: str, value: str) -> str:
    if any(c in value for c in "\r\n\0"):
        raise ToolError(f"the header argument {argument} cannot hold a line break")
    if not value.isascii():
        raise ToolError(f"the header argument {argument} must be ASCII text")
    return value


def _body(plan: Plan, given: Mapping[str, Any]) -> tuple[bytes, str | None]:
    """The body's bytes and its media type (none: no body)."""
    body = plan.body
    if body is None:
        return b"", None
    value: Any
    if body.argument is not None:
        if body.argument not in given:
            return b"", None
        value = given[body.argument]
    else:
        claimed = {p.argument for p in plan.params}
        value = {k: v for k, v in given.items() if k in body.fields or (body.extras and k not in claimed)}
        if not value and not body.required:
            return b"", None
    if not is_form(body.media_type):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(), body.media_type
    if not isinstance(value, Mapping):
        raise ToolError(f"the body of a form must be an object, not {type(value).__name__}")
    pairs = [
        (str(k), item if isinstance(item, str) else _text(item))
        for k, v in value.items()
        for item in (v if isinstance(v, list) else [v])
    ]
    return urlencode(pairs).encode(), body.media_type
