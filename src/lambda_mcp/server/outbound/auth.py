"""How a tool's outgoing request is authenticated: `auth=` of `app.openapi` and `app.mount`.

- `None`: nothing added;
- `Header(name, value)` / `bearer(value)`: a header whose value is given, or read from a secret
  (`secretsmanager:...`, `ssm:...`, through Powertools Parameters, cached five minutes);
- `"sigv4"` / `SigV4(service=..., region=...)`: AWS Signature Version 4 with the function's own role,
  for API Gateway with IAM auth, private APIs and Function URLs (service and region from the host name,
  else `execute-api` and `AWS_REGION`);
- `"caller"`: the caller's token at the identity provider they signed in with through the authorization
  facade (`ctx.upstream_token()`), as a bearer;
- `"connection:<name>"`: the caller's token at a declared connection (`ctx.connection(name)`), as a bearer.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from ..errors import DeclarationError, ToolError
from .secrets import resolve_async

if TYPE_CHECKING:
    from ..context import Context


_REGION_IN_HOST = re.compile(r"\.(?:execute-api|lambda-url)\.([a-z]{2}(?:-[a-z]+)+-\d+)\.")


def default_service(url: str) -> str:
    """`lambda` for a Function URL (`*.lambda-url.<region>.on.aws`), else `execute-api`."""
    host = urlsplit(url).hostname or ""
    return "lambda" if ".lambda-url." in host else "execute-api"


def region_in_host(url: str) -> str | None:
    """The region an API Gateway or Function URL host names (`<id>.execute-api.<region>.amazonaws.com`)."""
    found = _REGION_IN_HOST.search("." + (urlsplit(url).hostname or "") + ".")
    return found.group(1) if found else None


@dataclass(frozen=True)
class Outgoing:
    """The request to authenticate, as it will be sent."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes


class OutboundAuth(Protocol):
    """Adds what authenticates one outgoing request."""

    @property
    def label(self) -> str:
        """What it is, for `lambda-mcp openapi check` and error messages (never a secret)."""
        ...

    async def headers(self, request: Outgoing, ctx: Context | None) -> dict[str, str]:
        """The headers to add; `ToolError` when they cannot be had (the caller has no token, ...)."""
        ...


@dataclass(frozen=True)
class Header:
    """A header whose value is `value`, or the secret it names (`secretsmanager:...`, `ssm:...`), after `prefix`."""

    name: str
    value: str
    prefix: str = ""

    @property
    def label(self) -> str:
        return f"header {self.name}"

    async def headers(self, request: Outgoing, ctx: Context | None) -> dict[str, str]:
        try:
            secret = await resolve_async(self.value)
        except Exception as exc:  # Powertools' own kinds: GetParameterError, a botocore error
            raise ToolError(f"could not read the secret for the {self.name} header: {type(exc).__name__}") from None
        return {self.name: self.prefix + secret}


def bearer(value: str) -> Header:
    """`Authorization: Bearer <value>`, the value given or read from the secret it names."""
    return Header("Authorization", value, "Bearer ")


@dataclass(frozen=True)
class SigV4:
    """Sign with the process's AWS credentials (the function's role in Lambda). `service` defaults to
    `lambda` for a Function URL host and `execute-api` otherwise; `region` to the one the host names,
    else `AWS_REGION`."""

    service: str | None = None
    region: str | None = None

    @property
    def label(self) -> str:
        return "sigv4" + (f" ({self.service})" if self.service else "")

    async def headers(self, request: Outgoing, ctx: Context | None) -> dict[str, str]:
        from ...storage.aws_clients import _session

        region = self.region or region_in_host(request.url) or os.environ.get("AWS_REGION")
        if not region:
            raise ToolError("cannot sign the request: no region (the host names none and AWS_REGION is unset)")
        credentials = _session().get_credentials()
        if credentials is None:
            raise ToolError("cannot sign the request: no AWS credentials in this environment")
        service = self.service or default_service(request.url)
        return signature_headers(credentials, service, region, request)


def signature_headers(credentials: Any, service: str, region: str, request: Outgoing) -> dict[str, str]:
    """The headers that sign `request` with AWS Signature Version 4 (botocore's `SigV4Auth`) for `service` in
    `region`: what the kit's tools and `lambda-mcp call --sigv4` add to what they send."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    # A Function URL wants the payload's hash as a header; API Gateway accepts it too.
    signed = {**request.headers, "x-amz-content-sha256": hashlib.sha256(request.body).hexdigest()}
    aws = AWSRequest(method=request.method, url=request.url, data=request.body, headers=signed)
    SigV4Auth(credentials, service, region).add_auth(aws)
    names = ("authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256")
    return {name: aws.headers[name] for name in names if aws.headers.get(name) is not None}


@dataclass(frozen=True)
class CallerToken:
    """`"caller"`: the caller's upstream token (`ctx.upstream_token()`) as a bearer."""

    label = "the caller's token"

    async def headers(self, request: Outgoing, ctx: Context | None) -> dict[str, str]:
        if ctx is None:
            raise ToolError("this request has no caller to act for")
        return {"Authorization": f"Bearer {await ctx.upstream_token()}"}


@dataclass(frozen=True)
class ConnectionToken:
    """`"connection:<name>"`: the caller's token at that connection (`ctx.connection(name)`) as a bearer."""

    name: str

    @property
    def label(self) -> str:
        return f"connection {self.name}"

    async def headers(self, request: Outgoing, ctx: Context | None) -> dict[str, str]:
        if ctx is None:
            raise ToolError("this request has no caller to act for")
        return {"Authorization": f"Bearer {await ctx.connection(self.name)}"}


def outbound_auth(value: Any, owner: str) -> OutboundAuth | None:
    """The `auth=` an `app.openapi` or `app.mount` was given, checked; `DeclarationError` naming `owner`."""
    if value is None or isinstance(value, (Header, SigV4, CallerToken, ConnectionToken)):
        return value
    if value == "sigv4":
        return SigV4()
    if value == "caller":
        return CallerToken()
    if isinstance(value, str) and value.startswith("connection:") and value != "connection:":
        return ConnectionToken(value.partition(":")[2])
    raise DeclarationError(
        f"{owner}: auth={value!r} is not one the kit knows: None, Header(name, value), bearer(value), 'sigv4',"
        " SigV4(service=..., region=...), 'caller' or 'connection:<name>'"
    )
