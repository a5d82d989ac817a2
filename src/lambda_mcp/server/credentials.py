"""The caller's tokens for other services, as handlers ask for them (`ctx.connection`, `ctx.disconnect`,
`ctx.upstream_token`), and what the kit plugs in behind those calls (`Credentials`).

The authorization facade (`LAMBDA_MCP_AUTH=proxy`) provides them in a deployment (`facade.credentials`);
the test client provides seeded ones (`SeededCredentials`: `Client(app, connections={"github": "t"})`).
Anywhere else a call is a `CredentialsUnavailable` error naming what is missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from .errors import ToolError

Context = Any
"""The handler's `server.context.Context` (named, not imported: the context imports this module)."""


class CredentialsUnavailable(ToolError):
    """The kit cannot give this caller a token for that service (no facade, a caller who is not a person
    signed in through it, an undeclared connection, an upstream without refresh tokens): the message says
    which. A tool may catch it; uncaught, the call ends with that message as its error result."""


class ConnectionDeclined(ToolError):
    """The user declined (or cancelled) connecting the service: the tool may catch it and go on without."""

    def __init__(self, name: str) -> None:
        super().__init__(f"connecting {name} was declined")
        self.name = name


class Credentials(Protocol):
    async def connection(self, ctx: Context, name: str) -> str:
        """A valid access token of the calling user at connection `name` (asking the user to connect when
        there is none: the call suspends)."""

    async def disconnect(self, ctx: Context, name: str) -> None:
        """Forget the calling user's tokens at `name` (the next `connection(name)` asks again)."""

    async def upstream_token(self, ctx: Context) -> str:
        """A fresh access token from the identity provider the caller signed in with."""

    async def exchange_token(self, ctx: Context, audience: str, scopes: Sequence[str]) -> str:
        """A token for another API (`audience`) in exchange for the caller's upstream token (RFC 8693)."""


class SeededCredentials:
    """The test client's: fixed tokens per connection (and for the upstream), for whoever calls."""

    def __init__(self, connections: Mapping[str, str], upstream: str | None = None) -> None:
        self.tokens = dict(connections)
        self.upstream = upstream

    async def connection(self, ctx: Context, name: str) -> str:
        token = self.tokens.get(name)
        if token is None:
            raise CredentialsUnavailable(
                f"no token for connection {name!r}: seed one with Client(app, connections={{{name!r}: '...'}})"
            )
        return token

    async def disconnect(self, ctx: Context, name: str) -> None:
        self.tokens.pop(name, None)

    async def upstream_token(self, ctx: Context) -> str:
        if self.upstream is None:
            raise CredentialsUnavailable("no upstream token: seed one with Client(app, upstream_token='...')")
        return self.upstream

    async def exchange_token(self, ctx: Context, audience: str, scopes: Sequence[str]) -> str:
        token = self.tokens.get(audience)
        if token is None:
            raise CredentialsUnavailable(
                f"no exchanged token for {audience!r}: seed one with Client(app, connections={{{audience!r}: '...'}})"
            )
        return token


NO_CREDENTIALS = (
    "calling other services as the user needs the authorization facade (LAMBDA_MCP_AUTH=proxy), where"
    " people sign in; in tests, seed tokens with Client(app, connections={...})"
)
