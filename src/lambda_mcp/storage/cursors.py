"""Opaque page cursors for listings (`tasks/list`): a JSON position, URL-safe Base64 encoded."""

from __future__ import annotations

import base64
import json


def encode_cursor(position: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(position, separators=(",", ":")).encode()).decode()


def decode_cursor(cursor: str) -> dict[str, object]:
    """Raises ValueError for anything that is not a cursor this store issued."""
    try:
        position = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("invalid cursor") from exc
    if not isinstance(position, dict):
        raise ValueError("invalid cursor")
    return position
