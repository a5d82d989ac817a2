"""Connections: the OAuth 2.0 providers an app's tools call as the user (`app.connection(...)`).

A connection names a provider's authorization and token endpoints and the app's client there:

```python
app.connection(
    "github",
    authorize_url="https://github.com/login/oauth/authorize",
    token_url="https://github.com/login/oauth/access_token",
    client_id="Iv1.0123456789abcdef",
    client_secret="secretsmanager:arn:aws:secretsmanager:eu-west-1:123456789012:secret:github-AbCdEf",
    scopes=["repo"],
)
```

`client_secret` is the secret itself (local work), or where it is: `secretsmanager:<arn or name>` or
`ssm:<name>`, read at run time with Powertools Parameters (cached `SECRET_MAX_AGE` seconds). The provider
must send the user back to `<facade>/connections/<name>/callback` (register that redirect URI there). A
tool asks for the calling user's token with `await ctx.connection("github")`; the flow that gets one is
the authorization facade's (`facade.connection_flow`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..config import secure_url
from .errors import DeclarationError
from .outbound.secrets import resolve

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


@dataclass(frozen=True)
class Connection:
    name: str
    authorize_url: str
    token_url: str
    client_id: str
    client_secret: str | None = None
    """The secret, or `secretsmanager:...` / `ssm:...` naming where it is; None: a public client (PKCE only)."""
    scopes: tuple[str, ...] = ()
    authorize_params: Mapping[str, str] = field(default_factory=dict)
    """Extra parameters of the authorization request (`{"access_type": "offline", "prompt": "consent"}`)."""

    def secret(self) -> str | None:
        """The client secret (blocking: a reference is read from AWS, cached `SECRET_MAX_AGE`)."""
        return None if self.client_secret is None else resolve(self.client_secret)


def declare(
    name: str,
    *,
    authorize_url: str,
    token_url: str,
    client_id: str,
    client_secret: str | None = None,
    scopes: Sequence[str] = (),
    authorize_params: Mapping[str, str] | None = None,
) -> Connection:
    """A checked declaration; `DeclarationError` naming what is wrong."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise DeclarationError(f"connection name {name!r}: 1-40 lower-case letters, digits, - and _")
    for label, url in (("authorize_url", authorize_url), ("token_url", token_url)):
        if not isinstance(url, str) or not secure_url(url):
            raise DeclarationError(f"connection {name!r}: {label} must be an https:// URL (http:// only on loopback)")
    if not client_id:
        raise DeclarationError(f"connection {name!r}: client_id is required")
    reserved = {"response_type", "client_id", "redirect_uri", "state", "code_challenge", "code_challenge_method"}
    extra = dict(authorize_params or {})
    if reserved & set(extra):
        raise DeclarationError(
            f"connection {name!r}: authorize_params cannot set {', '.join(sorted(reserved & set(extra)))}"
        )
    return Connection(name, authorize_url, token_url, client_id, client_secret, tuple(scopes), extra)
