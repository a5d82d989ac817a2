"""The test client's caller: a fixed principal, scopes and token claims that a kit authenticates every
request as, so scopes are enforced by the kit's own checks exactly as under auth `jwt` (hidden from lists,
403 on use) and handlers see the claims as `ctx.claims`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from ..auth.guard import Denied
from ..auth.identity import Identity
from ..config import Settings
from ..kit import Kit

DEFAULT_PRINCIPAL = "test-client"
"""The principal of a client given `scopes` without a `principal`."""


class FixedCaller:
    """A guard (`auth.guard.Guard`) that lets every request through as one identity, refusing (403) only
    when the identity lacks a scope the settings require of every request (`LAMBDA_MCP_AUTH_SCOPES`)."""

    mode = "test"

    def __init__(self, identity: Identity, required: frozenset[str]) -> None:
        self.identity = identity
        self.required = required

    async def authenticate(
        self, headers: Mapping[str, str], event: object, audience: str, method: str = "POST"
    ) -> Identity | None:
        if self.identity.missing(self.required):
            raise Denied(403, "the token lacks a scope this server requires", "insufficient_scope", self.required)
        return self.identity


def caller(
    principal: str | None, scopes: Iterable[str] | None, claims: Mapping[str, Any] | None = None
) -> Identity | None:
    """The identity a client presents: None (auth `none`, nothing enforced) unless given a principal,
    scopes or claims; a principal (or claims) alone holds no scopes, as a token without a `scope` claim.
    The claims are copied once, here: a test that changes its dict afterwards does not change the caller."""
    if principal is None and scopes is None and claims is None:
        return None
    if isinstance(scopes, str):
        raise TypeError(f"scopes must be a list of scope names, not the string {scopes!r}")
    if principal is not None and (not isinstance(principal, str) or not principal):
        raise ValueError(f"principal must be a non-empty string, not {principal!r}")
    if claims is not None and not isinstance(claims, Mapping):
        raise TypeError(f"claims must be a mapping of claim names to values, not {type(claims).__name__}")
    who = principal if principal is not None else DEFAULT_PRINCIPAL
    return Identity(who, frozenset(scopes or ()), dict(claims or {}))


def settings_for(settings: Settings, identity: Identity | None) -> Settings:
    """The kit's settings: with a caller, auth `none` becomes `gateway` (someone in front of the kit
    authenticated the caller; the kit enforces its scopes), so the kit does not warn that scopes go
    unenforced. The guard `present` installs replaces the mode's own either way."""
    return replace(settings, auth="gateway") if identity is not None and settings.auth == "none" else settings


def present(kit: Kit, identity: Identity) -> None:
    """Make `kit` authenticate every request as `identity`."""
    kit.access.guard = FixedCaller(identity, frozenset(kit.settings.auth_scopes))
