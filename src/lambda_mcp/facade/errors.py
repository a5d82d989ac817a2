"""OAuth errors the facade answers with: RFC 6749 codes and fixed descriptions, never internal text."""

from __future__ import annotations


class OAuthError(Exception):
    """A refusal: the RFC 6749 / 7591 `error` code, a fixed description, the HTTP status, and for a 429 the
    seconds until the limit it hit opens again."""

    def __init__(
        self,
        error: str,
        description: str,
        status: int = 400,
        *,
        retry_after: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status
        self.retry_after = retry_after
        self.headers = headers or {}
        """Headers the refusal carries (`DPoP-Nonce` for `use_dpop_nonce`)."""

    def body(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}
