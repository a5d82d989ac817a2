"""Secrets the facade keeps in its table, sealed: AES-256-GCM, bound to the row they belong to.

Two kinds of key:
- the **state key** (`LAMBDA_MCP_STATE_KEY`, or the secret `LAMBDA_MCP_STATE_KEY_SECRET` names: the key
  that seals 2026 `requestState`) seals the upstream's refresh token in a sign-in's row; a key is derived
  from it per purpose, and after a rotation the previous version still opens what it sealed;
- a **token-derived key** seals the refresh token that replaced a used one (the refresh leeway): only
  a request presenting the used token can open it, and the table holds nothing that does.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Callable, Sequence

_VERSION = "v1"


def derived_key(secret: bytes | str, purpose: str) -> bytes:
    """A 256-bit key for `purpose` from `secret` (HMAC-SHA256: `secret` is a key or a 256-bit token)."""
    raw = secret.encode() if isinstance(secret, str) else secret
    return hmac.new(raw, b"lambda-mcp facade\n" + purpose.encode(), hashlib.sha256).digest()


def seal(key: bytes, plaintext: str, bound_to: str) -> str:
    """`plaintext` encrypted under `key`, authenticated with `bound_to` (the row's key)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = secrets.token_bytes(12)
    sealed = AESGCM(key).encrypt(nonce, plaintext.encode(), bound_to.encode())
    return f"{_VERSION}.{base64.urlsafe_b64encode(nonce + sealed).decode()}"


def unseal(keys: Sequence[bytes], sealed: object, bound_to: str) -> str | None:
    """What `seal` sealed under any of `keys` for `bound_to`; None when none of them opens it."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    if not isinstance(sealed, str) or not sealed.startswith(_VERSION + "."):
        return None
    try:
        blob = base64.urlsafe_b64decode(sealed[len(_VERSION) + 1 :])
    except ValueError:
        return None
    for key in keys:
        try:
            return AESGCM(key).decrypt(blob[:12], blob[12:], bound_to.encode()).decode()
        except (InvalidTag, ValueError):
            continue
    return None


class StateKeys:
    """The state key's versions (the first seals, any opens) as keys for one purpose; no key: nothing seals."""

    def __init__(self, source: Callable[[], Sequence[bytes]] | None, purpose: str) -> None:
        self._source = source
        self._purpose = purpose

    def keys(self) -> list[bytes]:
        return [derived_key(key, self._purpose) for key in (self._source() if self._source else ())]
