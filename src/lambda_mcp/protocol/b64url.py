"""Unpadded URL-safe base64 for text the kit puts into ids: event-stream names, request ids, sealed state.

Its output has no `.`, `~` or `=`, so it can sit between the separators the kit's ids use.
"""

from __future__ import annotations

import base64
import json

from .jsonrpc import RequestId


def encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def decode(text: str) -> bytes:
    """Raises ValueError for text that `encode` did not make (other characters, padding, stray bits)."""
    if not set(text) <= _ALPHABET or len(text) % 4 == 1:
        raise ValueError("not unpadded base64url")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if encode(data) != text:
        raise ValueError("not canonical base64url")
    return data


def encode_text(text: str) -> str:
    return encode(text.encode())


def decode_text(encoded: str) -> str | None:
    """The text `encode_text` made, or None for anything else."""
    try:
        return decode(encoded).decode()
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        return None


def encode_request_id(request_id: object) -> str:
    """A JSON-RPC request id (string or number) as id-safe text."""
    return encode(json.dumps(request_id, ensure_ascii=False).encode())


def decode_request_id(encoded: str) -> RequestId | None:
    """The request id `encode_request_id` made, or None for anything else."""
    try:
        value = json.loads(decode(encoded))
    except ValueError:
        return None
    if not isinstance(value, str | int) or isinstance(value, bool) or encode_request_id(value) != encoded:
        return None
    return value
