"""Who may sign in through the facade, and what of the upstream identity its tokens carry.

`LAMBDA_MCP_AUTH_UPSTREAM_REQUIRE` lists `claim=value` conditions on the upstream's validated identity
(its ID token, completed from userinfo), all of which must hold: a list-valued claim holds when it
contains the value, any other when its text is the value (`true` for a boolean true, so
`email_verified=true` works). `LAMBDA_MCP_AUTH_UPSTREAM_CLAIMS` names the claims copied into the facade's
access tokens, where the app reads them as `ctx.claims`; the claims a token already has a meaning for
(`iss`, `sub`, `aud`, `scope`, ...) are never overwritten.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

logger = logging.getLogger("lambda_mcp.auth")

RESERVED = frozenset(
    {
        "iss",
        "sub",
        "aud",
        "exp",
        "nbf",
        "iat",
        "jti",
        "scope",
        "client_id",
        "sid",
        "cnf",
        "azp",
        "typ",
        "nonce",
        "idp_iss",
    }
)
MAX_COPIED_BYTES = 4096
"""The copied claims, as JSON, at most: an access token stays well under a header's size."""


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def holds(value: object, wanted: str) -> bool:
    """Whether one condition holds for a claim's `value`."""
    if isinstance(value, list | tuple):
        return any(_text(item) == wanted for item in value)
    return value is not None and _text(value) == wanted


def admitted(claims: Mapping[str, Any], conditions: Iterable[tuple[str, str]]) -> bool:
    return all(holds(claims.get(claim), wanted) for claim, wanted in conditions)


def copied(claims: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """The named claims the upstream gave, reserved ones left out; `{}` when they would not fit."""
    picked = {name: claims[name] for name in names if name in claims and name not in RESERVED}
    try:
        text = json.dumps(picked, default=str, allow_nan=False)
    except ValueError:  # NaN or Infinity: not JSON, and other libraries would refuse the token
        logger.warning(
            "auth: the upstream claims to copy (%s) hold a number JSON cannot carry: none copied", ",".join(picked)
        )
        return {}
    if len(text) > MAX_COPIED_BYTES:
        logger.warning("auth: the upstream claims to copy (%s) are over %d bytes: none copied", ",".join(picked), 4096)
        return {}
    plain: dict[str, Any] = json.loads(text)  # JSON values only
    return plain
