"""Seal the tokens the facade keeps for users at other services (their connections): KMS envelope
encryption in a deployment, the state key in local work.

- **`KmsEnvelope`** (`LAMBDA_MCP_AUTH_TOKEN_KEY_ID`, a symmetric KMS key): one data key per item
  (`GenerateDataKey`, AES-256), the item's key as the encryption context, so a sealed value decrypts only
  for the row it was sealed for (and CloudTrail shows which); the sealed form holds the key's ARN and the
  encrypted data key. The function needs `kms:GenerateDataKey` and `kms:Decrypt` on that key only.
- **`StateKeySealing`**: AES-256-GCM under a key derived from the state key (`sealing`), bound to the
  row's key the same way; after a rotation the previous version still opens what it sealed.

Both are blocking (KMS is a network call): callers run them in a worker thread.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .sealing import StateKeys, seal, unseal

CONTEXT_KEY = "lambda-mcp-item"


class SealingError(Exception):
    """The key cannot be used (KMS unreachable or denied, no state key)."""


class TokenSealing(Protocol):
    def seal(self, plaintext: str, bound_to: str) -> dict[str, str]: ...

    def unseal(self, sealed: object, bound_to: str) -> str | None:
        """The plaintext; None when `sealed` was not sealed for `bound_to` (or is not a sealed value)."""


class StateKeySealing:
    def __init__(self, source: Callable[[], Sequence[bytes]] | None) -> None:
        self.keys = StateKeys(source, "connection tokens")

    def seal(self, plaintext: str, bound_to: str) -> dict[str, str]:
        keys = self.keys.keys()
        if not keys:
            raise SealingError("no state key to seal connection tokens with (LAMBDA_MCP_STATE_KEY)")
        return {"v": seal(keys[0], plaintext, bound_to)}

    def unseal(self, sealed: object, bound_to: str) -> str | None:
        if not isinstance(sealed, dict):
            return None
        return unseal(self.keys.keys(), sealed.get("v"), bound_to)


class KmsEnvelope:
    def __init__(self, key_id: str, *, client: Any | None = None) -> None:
        self.key_id = key_id
        self._client = client

    def _kms(self) -> Any:
        if self._client is None:
            from ..storage.aws_clients import client

            self._client = client("kms", retries={"mode": "standard", "max_attempts": 3})
        return self._client

    def seal(self, plaintext: str, bound_to: str) -> dict[str, str]:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        try:
            made = self._kms().generate_data_key(
                KeyId=self.key_id, KeySpec="AES_256", EncryptionContext={CONTEXT_KEY: bound_to}
            )
        except Exception as exc:  # botocore's errors: denied, unknown key, unreachable
            raise SealingError(f"KMS GenerateDataKey with {self.key_id} failed: {exc}") from exc
        nonce = secrets.token_bytes(12)
        blob = AESGCM(made["Plaintext"]).encrypt(nonce, plaintext.encode(), bound_to.encode())
        return {
            "k": str(made.get("KeyId") or self.key_id),
            "d": base64.b64encode(made["CiphertextBlob"]).decode(),
            "v": base64.b64encode(nonce + blob).decode(),
        }

    def unseal(self, sealed: object, bound_to: str) -> str | None:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        if not isinstance(sealed, dict) or not all(isinstance(sealed.get(k), str) for k in ("k", "d", "v")):
            return None
        try:
            opened = self._kms().decrypt(
                CiphertextBlob=base64.b64decode(sealed["d"]),
                KeyId=sealed["k"],
                EncryptionContext={CONTEXT_KEY: bound_to},
            )
        except Exception as exc:
            if "InvalidCiphertext" in type(exc).__name__ or "InvalidCiphertext" in str(exc):
                return None  # sealed for another item
            raise SealingError(f"KMS Decrypt with {sealed['k']} failed: {exc}") from exc
        blob = base64.b64decode(sealed["v"])
        try:
            return AESGCM(opened["Plaintext"]).decrypt(blob[:12], blob[12:], bound_to.encode()).decode()
        except (InvalidTag, ValueError):
            return None


def token_sealing(key_id: str | None, state_keys: Callable[[], Sequence[bytes]] | None) -> TokenSealing:
    return KmsEnvelope(key_id) if key_id else StateKeySealing(state_keys)
