"""Reading the OpenAPI document `app.openapi` is given: a file (JSON or YAML), an `https://` URL fetched once
(`http://` only on loopback), or a dict; checked to be OpenAPI 3.0 or 3.1, made plain JSON values, and the
base URL its calls go to (`base_url=`, else its first server's)."""

from __future__ import annotations

import datetime
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from ...config import secure_url
from .._refusals import where
from ..errors import DeclarationError

VERSIONS = ("3.0", "3.1")


class SpecError(DeclarationError):
    """A document `app.openapi` cannot serve, or a declaration that does not fit it: `problem`, about
    the document `source` (its path, its URL or `dict`), refused where the user declared it."""

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(f"app.openapi({source}): {problem}", where())
        self.source = source
        self.problem = problem


@dataclass(frozen=True)
class Document:
    """An OpenAPI 3.0 or 3.1 document as plain JSON values."""

    content: Mapping[str, Any]
    source: str
    """Its path, its URL, or `dict`: for messages."""
    url: str | None
    """Where it was fetched from (relative server URLs resolve against it), None for a file or a dict."""
    version: str

    @property
    def legacy(self) -> bool:
        """OpenAPI 3.0: its schemas are the 3.0 dialect (`nullable`, boolean `exclusiveMinimum`, ...)."""
        return self.version.startswith("3.0")


def load(spec: str | Path | Mapping[str, Any], timeout: float) -> Document:
    """The document `spec` names or is; `SpecError` (one line, with the fix) for one it cannot read or serve."""
    url: str | None = None
    if isinstance(spec, Mapping):
        source, raw = "dict", spec
    elif isinstance(spec, str) and spec.startswith(("https://", "http://")):
        source = url = spec
        raw = _parsed(source, *_fetched(spec, timeout))
    elif isinstance(spec, (str, Path)):
        source = str(spec)
        try:
            text = Path(spec).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
            raise SpecError(source, f"cannot read it: {reason}") from None
        raw = _parsed(source, text, Path(spec).suffix.lower())
    else:
        raise SpecError(repr(spec), "give a path, an https:// URL or the parsed document (a dict)")
    try:
        content = _plain(raw)
    except RecursionError:
        raise SpecError(source, "it refers to itself through YAML aliases, or nests too deeply") from None
    if not isinstance(content, dict):
        raise SpecError(source, "it is not an OpenAPI document (an object at the top)")
    return Document(content, source, url, _version(source, content))


def server_url(document: Document, given: str | None) -> str:
    """The base URL calls go to: `given`, else the document's first server (its variables at their
    defaults; a relative URL against the document's own URL; none at all is `/` there), without a
    trailing `/` or doubled ones."""
    source = document.source
    if given is not None:
        if not secure_url(given):
            raise SpecError(source, f"base_url={given!r} must be an https:// URL (http:// only on loopback)")
        return given.rstrip("/")
    servers = document.content.get("servers")
    first = servers[0] if isinstance(servers, list) and servers and isinstance(servers[0], dict) else None
    found = first.get("url") if first is not None else None
    if first is not None and isinstance(found, str):
        for name, variable in (first.get("variables") or {}).items():
            if isinstance(variable, dict) and "default" in variable:
                found = found.replace("{" + str(name) + "}", str(variable["default"]))
    elif document.url is not None:
        found = "/"  # OpenAPI: no servers is one server at `/`
    if not isinstance(found, str):
        raise SpecError(source, "it names no server to call: pass base_url='https://...'")
    if not urlsplit(found).scheme:
        if document.url is None:
            raise SpecError(source, f"its server URL {found!r} is relative: pass base_url='https://...'")
        found = urljoin(document.url, found)
    if not secure_url(found):
        raise SpecError(source, f"its server {found!r} is not https:// (http:// only on loopback): pass base_url=")
    parts = urlsplit(found)  # API Gateway's exports: `.../{basePath}` with the default `/prod`
    return urlunsplit(parts._replace(path=re.sub(r"/{2,}", "/", parts.path))).rstrip("/")


def _fetched(url: str, timeout: float) -> tuple[str, str]:
    """The text at `url` and a suffix that says how to parse it (`.json`, `.yaml` or ``: guess)."""
    if not secure_url(url):
        raise SpecError(url, "an http:// document must be on a loopback host; use https://")
    import httpx

    try:
        response = httpx.get(url, timeout=timeout, follow_redirects=False, headers={"accept": "*/*"})
    except httpx.HTTPError as exc:
        raise SpecError(url, f"cannot fetch it: {type(exc).__name__} {exc}".strip()) from None
    if response.status_code != 200:
        moved = response.headers.get("location")
        hint = f" (a redirect to {moved}: give that URL)" if moved and response.is_redirect else ""
        raise SpecError(url, f"fetching it answered HTTP {response.status_code}{hint}")
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    suffix = ".json" if kind.endswith("json") else ".yaml" if "yaml" in kind else Path(urlsplit(url).path).suffix
    return response.text, suffix.lower()


def _parsed(source: str, text: str, suffix: str) -> Any:
    """`text` as JSON (`.json`), YAML (`.yaml`, `.yml`), or whichever it looks like."""
    if suffix == ".json" or (suffix not in (".yaml", ".yml") and text.lstrip().startswith("{")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise SpecError(source, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    import yaml

    try:
        return yaml.load(text, Loader=_loader())  # noqa: S506 - a safe loader (CSafeLoader when there is one)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise SpecError(source, f"not valid YAML: {problem}{at}") from None


@functools.cache
def _loader() -> type:
    """PyYAML's safe loader (the C one when built) that reads timestamps as the strings they are in JSON."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    resolvers = {
        first: [(tag, pattern) for tag, pattern in found if tag != "tag:yaml.org,2002:timestamp"]
        for first, found in base.yaml_implicit_resolvers.items()
    }
    return type("OpenAPILoader", (base,), {"yaml_implicit_resolvers": resolvers})


def _plain(value: Any) -> Any:
    """`value` as JSON values: keys as strings (YAML's `200:`), tuples as lists, dates as ISO strings."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return str(value)


def _version(source: str, content: Mapping[str, Any]) -> str:
    if "swagger" in content:
        raise SpecError(
            source,
            f"it is Swagger {content['swagger']}, which app.openapi does not read: convert it to OpenAPI 3"
            " first (e.g. `npx swagger2openapi`)",
        )
    version = str(content.get("openapi", ""))
    if not version:
        raise SpecError(source, "it is not an OpenAPI document (no `openapi` version)")
    if not version.startswith(tuple(v + "." for v in VERSIONS)) and version not in VERSIONS:
        raise SpecError(source, f"it is OpenAPI {version}; app.openapi reads 3.0 and 3.1")
    if not isinstance(content.get("paths"), dict):
        raise SpecError(source, "it has no `paths` object")
    return version
