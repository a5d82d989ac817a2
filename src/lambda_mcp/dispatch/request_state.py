"""Seal and open MRTR `requestState`: HMAC-SHA256 over the payload, bound to method, params and expiry.

The key comes from configuration shared by every instance, so any instance can open a state
another one sealed; a state that fails any check is answered with -32602.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from ..protocol import b64url
from ..protocol.errors import INTERNAL_ERROR, MCPError, invalid_params
from ..state_keys import FixedKey, KeyRing

_IGNORED_PARAMS = frozenset({"_meta", "inputResponses", "requestState"})
NO_KEY = "requestState sealing key is not configured (set LAMBDA_MCP_STATE_KEY or LAMBDA_MCP_STATE_KEY_SECRET)"


def params_digest(method: str, params: dict[str, Any]) -> str:
    """A digest of the request's salient params (everything but `_meta` and the MRTR fields)."""
    salient = {k: v for k, v in params.items() if k not in _IGNORED_PARAMS}
    blob = json.dumps([method, salient], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


class StateSealer:
    """Seals `{answers, principal}` for one request; `key=None` refuses to seal (misconfiguration). `key` is
    one key, or a `KeyRing` (a secret read at run time: its first key seals, any of its keys opens)."""

    def __init__(self, key: bytes | KeyRing | None, ttl_seconds: float = 900.0) -> None:
        self._ring: KeyRing | None = FixedKey(key) if isinstance(key, bytes) else key
        self._ttl = ttl_seconds

    def seal(
        self, method: str, params: dict[str, Any], payload: dict[str, Any], now: float, principal: str | None
    ) -> str:
        if self._ring is None:
            raise MCPError(INTERNAL_ERROR, NO_KEY)
        body = {
            "m": method,
            "d": params_digest(method, params),
            "x": int(now + self._ttl),
            "p": principal,
            "a": payload,
        }
        data = b64url.encode(json.dumps(body, separators=(",", ":")).encode())
        return f"{data}.{_mac(self._ring.in_use()[0], data)}"

    def open(
        self, state: object, method: str, params: dict[str, Any], now: float, principal: str | None
    ) -> dict[str, Any]:
        """The payload of a valid state; raises -32602 when it is forged, stale or for another request."""
        if self._ring is None:
            raise MCPError(INTERNAL_ERROR, NO_KEY)
        # a sealed state is ASCII (base64url): anything else, a lone surrogate included, is not one of ours
        if not isinstance(state, str) or not state.isascii() or state.count(".") != 1:
            raise invalid_params("Invalid requestState: integrity check failed")
        data, mac = state.split(".")
        # every key of the ring opens (a state sealed before a rotation)
        if not any(hmac.compare_digest(mac.encode(), _mac(key, data).encode()) for key in self._ring.in_use()):
            raise invalid_params("Invalid requestState: integrity check failed")
        try:
            body = json.loads(b64url.decode(data))
        except ValueError:
            raise invalid_params("Invalid requestState: integrity check failed") from None
        if body.get("x", 0) < now:
            raise invalid_params("Invalid requestState: expired")
        if body.get("m") != method or body.get("d") != params_digest(method, params) or body.get("p") != principal:
            raise invalid_params("Invalid requestState: issued for a different request")
        payload = body.get("a")
        return payload if isinstance(payload, dict) else {}


def _mac(key: bytes, data: str) -> str:
    return b64url.encode(hmac.new(key, data.encode(), hashlib.sha256).digest())
