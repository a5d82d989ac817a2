"""An API Gateway REST API Lambda authorizer (`TOKEN` type) that validates bearer tokens like auth `jwt`.

It puts the token check in front of the REST API, so that API Gateway itself answers a request
without a valid token: with a 401 `UNAUTHORIZED` gateway response, which (unlike a 401 from the
function, whose `WWW-Authenticate` API Gateway renames) can carry the `WWW-Authenticate` challenge
(template.yaml adds it). A valid token gets an Allow policy for the whole API (so API Gateway may
cache the decision per token) and the principal; a token lacking the required scopes gets Deny (403).
The function behind it validates the token again (it runs auth `jwt` too): the authorizer saves it
the invocations, not the checks.

When the issuer's keys cannot be fetched, the token may well be good: the authorizer then fails with
`IssuerDown` rather than `Unauthorized`, which API Gateway answers with its `AUTHORIZER_FAILURE`
gateway response (template.yaml: 503 with `Retry-After`), so the client keeps its token and retries.
Discovery gives up after 6 s (`auth.issuer.DISCOVERY_SECONDS`), inside the authorizer's 10 s timeout.
"""

from __future__ import annotations

from typing import Any

from .guard import BearerGuard, Denied


class Unauthorized(Exception):
    """Raised with the message `Unauthorized`: the one error API Gateway turns into a 401."""

    def __init__(self) -> None:
        super().__init__("Unauthorized")


class IssuerDown(Exception):
    """The issuer's keys are unavailable: any error but `Unauthorized` is API Gateway's `AUTHORIZER_FAILURE`."""


def api_arn(method_arn: str) -> str:
    """`arn:aws:execute-api:<region>:<account>:<api>/<stage>/*/*` for any method ARN of the API."""
    prefix, _, path = method_arn.partition("/")
    stage = path.split("/", 1)[0]
    return f"{prefix}/{stage}/*/*"


def default_audience(method_arn: str) -> str:
    """The API's own URL for `/mcp` on its execute-api domain: `https://<api>.execute-api.<region>.amazonaws.com/<stage>/mcp`."""
    fields = method_arn.split(":")
    region, api_and_path = fields[3], fields[5]
    api, _, path = api_and_path.partition("/")
    stage = path.split("/", 1)[0]
    suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f"https://{api}.execute-api.{region}.{suffix}/{stage}/mcp"


def _policy(principal: str, effect: str, resource: str, context: dict[str, str] | None = None) -> dict[str, Any]:
    statement = {"Action": "execute-api:Invoke", "Effect": effect, "Resource": resource}
    response: dict[str, Any] = {
        "principalId": principal,
        "policyDocument": {"Version": "2012-10-17", "Statement": [statement]},
    }
    if context:
        response["context"] = context
    return response


async def authorize(guard: BearerGuard, event: dict[str, Any]) -> dict[str, Any]:
    """The authorizer's answer for one `TOKEN` event; raises `Unauthorized` for a missing or bad token."""
    method_arn = str(event.get("methodArn", ""))
    headers = {"authorization": str(event.get("authorizationToken") or "")}
    try:
        identity = await guard.authenticate(headers, event, default_audience(method_arn))
    except Denied as denied:
        if denied.status == 403:
            return _policy("insufficient_scope", "Deny", api_arn(method_arn))
        if denied.status == 503:
            raise IssuerDown(denied.description) from None
        raise Unauthorized() from None
    assert identity is not None
    context = {"principal": identity.principal, "scope": " ".join(sorted(identity.scopes or ()))}
    return _policy(identity.principal, "Allow", api_arn(method_arn), context)
