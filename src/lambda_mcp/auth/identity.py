"""Who is calling: the authenticated `Identity` of one request, and how its principal string is made.

The principal is what sessions, tasks, suspended calls and sealed `requestState` are bound to. It
names the issuer as well as the subject, so equal `sub`s from two issuers never meet (a token without
`sub`, such as a client-credentials token, is bound to its client):

| source | principal |
|---|---|
| a JWT with a subject (validated by the kit or an API Gateway authorizer) | `<iss>#<sub>` |
| a JWT without one | `client:<iss>#<client_id>` |
| an IAM-signed request | the caller's ARN (`userArn`) |
| a Lambda authorizer | `lambda-authorizer#<principalId>` |

The kinds cannot meet: an issuer identifier is an `https` URL without a fragment (RFC 8414 §2; a JWT
whose `iss` has no `://` names no principal), so a subject principal starts with a URL scheme and holds
its first `#` right after the issuer, while the others start with `client:`, `arn:` or
`lambda-authorizer#`. An IAM principal is only as distinct as its ARN: for an assumed role it is
`arn:aws:sts::<account>:assumed-role/<role>/<session name>`, and the session name is whatever the
caller chose when it assumed the role, so everyone who may assume a role can act as any of its
sessions. Give callers that must be kept apart roles of their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..protocol.values import Value, set_field


class Identity(Value):
    """An authenticated caller. `scopes` is what its token grants; `None` when scopes are not enforced
    (auth `none`), which lets every scope-protected tool, resource and prompt through."""

    __slots__ = ("principal", "scopes", "claims")
    principal: str
    scopes: frozenset[str] | None
    claims: Mapping[str, Any]

    def __init__(
        self,
        principal: str,
        scopes: frozenset[str] | None = frozenset(),
        claims: Mapping[str, Any] | None = None,
    ) -> None:
        set_field(self, "principal", principal)
        set_field(self, "scopes", scopes)
        set_field(self, "claims", {} if claims is None else claims)

    def allows(self, needed: frozenset[str]) -> bool:
        return self.scopes is None or needed <= self.scopes

    def missing(self, needed: frozenset[str]) -> frozenset[str]:
        return frozenset() if self.scopes is None else needed - self.scopes


def jwt_principal(claims: Mapping[str, Any]) -> str | None:
    """`<iss>#<sub>` for a token's claims (`client:<iss>#<client_id>` when it has no subject); None when
    the claims name no issuer URL, or neither a subject nor a client."""
    issuer = claims.get("iss")
    if not isinstance(issuer, str) or "://" not in issuer or "#" in issuer:
        return None
    subject = claims.get("sub")
    if isinstance(subject, str) and subject:
        return f"{issuer}#{subject}"
    client = claims.get("client_id") or claims.get("azp")
    if isinstance(client, str) and client:
        return f"client:{issuer}#{client}"
    return None


def scopes_of(value: object) -> frozenset[str]:
    """Scopes from a `scope` claim (space-separated text), an `scp` list, or API Gateway's stringified
    list (`"[a b]"`)."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1].replace(",", " ")
        return frozenset(part for part in text.split() if part)
    if isinstance(value, list | tuple):
        return frozenset(item for item in value if isinstance(item, str) and item)
    return frozenset()
