"""Names: a tool's (MCP's rule: 1-128 of `A-Z a-z 0-9 _ . -`), from an operation's `operationId` or else its
method and path (`GET /pets/{petId}` -> `get_pets_petId`), and an argument's, unique within its tool."""

from __future__ import annotations

import re
from collections.abc import Collection

MAX_LENGTH = 128
_INVALID_RUN = re.compile(r"[^A-Za-z0-9_.-]+")


def made_name(method: str, path: str) -> str:
    """The name of an operation without an `operationId`: its method and path, made valid."""
    return valid_name(f"{method.lower()}_{path.replace('{', '').replace('}', '')}")


def valid_name(text: str) -> str:
    """`text` as a valid tool name: each run of other characters becomes one `_` (none at the ends), and
    it is cut to 128 characters; `operation` when nothing is left."""
    name = _INVALID_RUN.sub("_", text)
    name = re.sub(r"_{2,}", "_", name).strip("_")[:MAX_LENGTH].rstrip("_")
    return name or "operation"


def unique(candidate: str, taken: Collection[str]) -> str:
    """`candidate`, or `candidate_2`, `candidate_3`, ... : the first not `taken`."""
    name, n = candidate, 1
    while name in taken:
        n += 1
        name = f"{candidate}_{n}"
    return name
