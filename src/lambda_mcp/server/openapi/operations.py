"""A document's operations: walked in document order (each with its path item's parameters), kept or left out
by the filters of `app.openapi` (tags, path patterns, methods), and the OAuth scopes its `security` asks for."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .document import Document, SpecError
from .refs import Unsupported, resolved

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
SCOPED_SCHEMES = ("oauth2", "openIdConnect")


@dataclass(frozen=True)
class Operation:
    """One operation: `method` (upper case) on `path`, its object, and the parameters its path item declares
    for all of its operations."""

    method: str
    path: str
    node: Mapping[str, Any]
    shared_parameters: Sequence[Any] = field(default_factory=tuple)

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def operation_id(self) -> str | None:
        found = self.node.get("operationId")
        return found if isinstance(found, str) and found else None

    @property
    def tags(self) -> tuple[str, ...]:
        found = self.node.get("tags")
        return tuple(str(tag) for tag in found) if isinstance(found, list) else ()


@dataclass(frozen=True)
class Filters:
    """Which operations become tools; empty keeps everything (`paths`: shell patterns, `*` crosses `/`)."""

    tags: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    exclude_paths: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()

    def checked(self, source: str) -> Filters:
        """These filters with the methods in upper case; `SpecError` for one that is no HTTP method."""
        unknown = [m for m in self.methods if m.lower() not in METHODS]
        if unknown:
            raise SpecError(source, f"methods: {', '.join(map(repr, unknown))} is not an HTTP method")
        return Filters(
            self.tags, self.exclude_tags, self.paths, self.exclude_paths, tuple(m.upper() for m in self.methods)
        )

    def left_out(self, operation: Operation) -> str | None:
        """Why the filters leave `operation` out, or None when it is kept."""
        if self.methods and operation.method not in self.methods:
            return f"its method is not one of methods={list(self.methods)}"
        if self.tags and not set(self.tags) & set(operation.tags):
            return f"it has none of tags={list(self.tags)}"
        excluded = set(self.exclude_tags) & set(operation.tags)
        if excluded:
            return f"its tag {sorted(excluded)[0]!r} is in exclude_tags"
        if self.paths and not any(fnmatch.fnmatchcase(operation.path, p) for p in self.paths):
            return f"its path matches none of paths={list(self.paths)}"
        for pattern in self.exclude_paths:
            if fnmatch.fnmatchcase(operation.path, pattern):
                return f"its path matches exclude_paths {pattern!r}"
        return None


def operations(document: Document) -> Iterator[Operation | tuple[str, str]]:
    """Each operation in document order, or `(path, reason)` for a path item that cannot be read."""
    for path, item in document.content["paths"].items():
        try:
            item = resolved(document.content, item)
        except Unsupported as exc:
            yield path, str(exc)
            continue
        if not isinstance(item, Mapping):
            continue
        shared = item.get("parameters")
        for method in METHODS:
            node = item.get(method)
            if isinstance(node, Mapping):
                yield Operation(method.upper(), path, node, tuple(shared) if isinstance(shared, list) else ())


def security_scopes(document: Document, operation: Operation) -> tuple[str, ...]:
    """The scopes of the oauth2 and openIdConnect schemes in the first requirement of the operation's
    `security` (else the document's): what a caller needs to call its tool. `Unsupported` for a scheme
    behind an external `$ref` (its tool is skipped rather than served without them)."""
    requirements = operation.node.get("security", document.content.get("security"))
    if not isinstance(requirements, list) or not requirements or not isinstance(requirements[0], Mapping):
        return ()
    components = document.content.get("components")
    schemes = components.get("securitySchemes") if isinstance(components, Mapping) else None
    found: list[str] = []
    for name, scopes in requirements[0].items():
        scheme = resolved(document.content, schemes.get(name) if isinstance(schemes, Mapping) else None)
        if isinstance(scheme, Mapping) and scheme.get("type") in SCOPED_SCHEMES and isinstance(scopes, list):
            found += [str(s) for s in scopes if str(s) not in found]
    return tuple(found)
