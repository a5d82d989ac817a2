"""The facade's hashes: what it stores of a secret (codes, refresh tokens, client secrets, the browser
cookie) and PKCE's S256 challenge."""

from __future__ import annotations

import base64
import hashlib


def digest(*parts: str) -> str:
    """The SHA-256 hex digest of `parts` (joined by newlines): a row's key or its stored secret."""
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def key_text(value: object, limit: int = 256) -> bool:
    """Whether `value` can key a row (a `jti`, a subject): text of 1 to `limit` characters that encodes as
    UTF-8 (JSON lets a JWT carry a lone surrogate, which `digest` and DynamoDB cannot take)."""
    if not isinstance(value, str) or not 0 < len(value) <= limit:
        return False
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def s256(verifier: str) -> str:
    """PKCE's S256 code challenge of `verifier` (RFC 7636 §4.2)."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
