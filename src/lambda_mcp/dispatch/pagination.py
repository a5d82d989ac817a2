"""Opaque list cursors: encode an offset, reject anything the server did not issue with -32602."""

from __future__ import annotations

import base64
from typing import Any

from ..protocol.errors import invalid_params


def page(items: list[Any], cursor: object, size: int) -> tuple[list[Any], str | None]:
    start = _offset(cursor) if cursor is not None else 0
    end = start + size
    next_cursor = base64.urlsafe_b64encode(f"o:{end}".encode()).decode() if end < len(items) else None
    return items[start:end], next_cursor


def _offset(cursor: object) -> int:
    try:
        assert isinstance(cursor, str)
        text = base64.urlsafe_b64decode(cursor.encode()).decode()
        kind, _, value = text.partition(":")
        assert kind == "o"
        offset = int(value)
        assert offset >= 0
    except Exception:
        raise invalid_params("Invalid cursor") from None
    return offset
