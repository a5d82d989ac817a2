"""Sign the facade's JWTs (access tokens, its browser cookie) with ES256, and publish the public key.

Two signers: `KmsSigner` (`LAMBDA_MCP_AUTH_SIGNING_KEY_ID`: an asymmetric ECC_NIST_P256 KMS key; the
private key never leaves KMS, the function needs `kms:Sign` and `kms:GetPublicKey`) and `LocalSigner`
(`LAMBDA_MCP_AUTH_SIGNING_KEY`: a PEM private key, for local work and tests; `lambda-mcp dev`
generates one). The key id is the RFC 7638 thumbprint of the public key, so it changes when the key
does. KMS returns DER-encoded ECDSA signatures; JOSE wants `r || s`, 32 bytes each (RFC 7518 §3.4).
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from typing import Any, Protocol

ALGORITHM = "ES256"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class SigningError(Exception):
    """The signing key cannot be used (KMS unreachable or denied, or a key of the wrong kind)."""


class Signer(Protocol):
    def public_jwk(self) -> dict[str, Any]:
        """The public key as a JWK, with `kid`, `use` and `alg` (blocking: KMS fetches it once)."""

    def sign(self, message: bytes) -> bytes:
        """The ES256 signature of `message`, JOSE form (blocking: KMS signs remotely)."""


def _jwk(public_key: Any) -> dict[str, Any]:
    from cryptography.hazmat.primitives.asymmetric import ec

    if not isinstance(public_key, ec.EllipticCurvePublicKey) or public_key.curve.name != "secp256r1":
        raise SigningError("the facade's signing key must be an EC P-256 key (KMS: ECC_NIST_P256)")
    numbers = public_key.public_numbers()
    jwk = {
        "crv": "P-256",
        "kty": "EC",
        "x": b64url(numbers.x.to_bytes(32, "big")),
        "y": b64url(numbers.y.to_bytes(32, "big")),
    }
    thumbprint = hashlib.sha256(json.dumps(jwk, separators=(",", ":"), sort_keys=True).encode()).digest()
    return {**jwk, "kid": b64url(thumbprint), "use": "sig", "alg": ALGORITHM}


def der_to_jose(signature: bytes) -> bytes:
    """A DER ECDSA signature (as KMS returns it) as JOSE's fixed-size `r || s`."""
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    r, s = decode_dss_signature(signature)
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


class LocalSigner:
    def __init__(self, pem: str) -> None:
        from cryptography.hazmat.primitives.serialization import load_pem_private_key

        try:
            self._key: Any = load_pem_private_key(pem.replace("\\n", "\n").encode(), password=None)
        except (ValueError, TypeError):
            raise SigningError("LAMBDA_MCP_AUTH_SIGNING_KEY is not a PEM private key without a password") from None
        self._jwk = _jwk(self._key.public_key())

    def public_jwk(self) -> dict[str, Any]:
        return self._jwk

    def sign(self, message: bytes) -> bytes:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec

        return der_to_jose(self._key.sign(message, ec.ECDSA(hashes.SHA256())))


class KmsSigner:
    def __init__(self, key_id: str, *, client: Any | None = None) -> None:
        self.key_id = key_id
        self._client = client
        self._jwk: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def _kms(self) -> Any:
        if self._client is None:
            from ..storage.aws_clients import client

            self._client = client("kms", retries={"mode": "standard", "max_attempts": 3})
        return self._client

    def public_jwk(self) -> dict[str, Any]:
        with self._lock:
            if self._jwk is None:
                from cryptography.hazmat.primitives.serialization import load_der_public_key

                try:
                    found = self._kms().get_public_key(KeyId=self.key_id)
                except Exception as exc:  # botocore's errors: denied, unknown key, unreachable
                    raise SigningError(f"KMS GetPublicKey of {self.key_id} failed: {exc}") from exc
                if found.get("KeySpec") not in (None, "ECC_NIST_P256") or found.get("KeyUsage") not in (
                    None,
                    "SIGN_VERIFY",
                ):
                    raise SigningError(f"KMS key {self.key_id} is not an ECC_NIST_P256 SIGN_VERIFY key")
                self._jwk = _jwk(load_der_public_key(found["PublicKey"]))
            return self._jwk

    def sign(self, message: bytes) -> bytes:
        """KMS signs up to 4 KB as the message itself (`RAW`: KMS hashes it); a longer one as its SHA-256
        (`DIGEST`). The facade's tokens are well under 4 KB."""
        raw = len(message) <= 4096
        try:
            signed = self._kms().sign(
                KeyId=self.key_id,
                Message=message if raw else hashlib.sha256(message).digest(),
                MessageType="RAW" if raw else "DIGEST",
                SigningAlgorithm="ECDSA_SHA_256",
            )
        except Exception as exc:
            raise SigningError(f"KMS Sign with {self.key_id} failed: {exc}") from exc
        return der_to_jose(signed["Signature"])


def jwks(signer: Signer) -> dict[str, Any]:
    return {"keys": [signer.public_jwk()]}


def mint(signer: Signer, claims: dict[str, Any], typ: str = "at+jwt") -> str:
    """A compact JWS of `claims` (blocking)."""
    header = {"alg": ALGORITHM, "kid": signer.public_jwk()["kid"], "typ": typ}
    signing_input = b64url(json.dumps(header, separators=(",", ":")).encode()) + "."
    signing_input += b64url(json.dumps(claims, separators=(",", ":")).encode())
    return signing_input + "." + b64url(signer.sign(signing_input.encode()))


def verify(signer: Signer, token: str, audience: str, issuer: str) -> dict[str, Any] | None:
    """The claims of a JWT this signer made for `audience` (the facade's cookie), None when it is not one."""
    import jwt

    try:
        key = jwt.PyJWK(signer.public_jwk(), algorithm=ALGORITHM)
        claims: dict[str, Any] = jwt.decode(token, key.key, algorithms=[ALGORITHM], audience=audience, issuer=issuer)
    except (jwt.PyJWTError, ValueError):
        return None
    return claims


def signer_for(key_pem: str | None, key_id: str | None) -> Signer:
    if key_pem:
        return LocalSigner(key_pem)
    assert key_id is not None  # Settings.check insists on one of the two
    return KmsSigner(key_id)


def generate_pem() -> str:
    """A new EC P-256 private key as PEM (`lambda-mcp dev`, tests)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
