"""The front doors `lambda-mcp dev --lambda` emulates: API Gateway HTTP API, REST API and a Function URL.

Each turns an HTTP request into the Lambda event its front door would send, and the handler's
response into what that front door would return. What they do to responses, and where it comes from:

- All three rename a `WWW-Authenticate` header the function returns to
  `x-amzn-Remapped-WWW-Authenticate`. For REST APIs AWS documents it (with `Authorization`,
  `Connection`, `Content-MD5`, `Max-Forwards` and `User-Agent`: "Amazon API Gateway important notes");
  for HTTP APIs and Function URLs it is reported first-hand by users (docs/decisions.md). So a 401 from
  the function reaches clients without its challenge, unless the deployment puts it back:
- HTTP API: template.yaml maps 401 and 403 responses of the integration (`responseParameters`),
  overwriting `WWW-Authenticate` with the copy the kit sends in `Lambda-Mcp-Challenge`.
- REST API: proxy integrations cannot map responses, so with auth `jwt` an authorizer answers for the
  function (`lambda_mcp.entrypoints.authorizer`), and its 401 / 403 are gateway responses, to which
  template.yaml adds the challenge. The REST API also has a stage (`v1`) in every path, and routes only
  `/mcp`, the well-known documents and the authorization facade's `/oauth/...` endpoints.
- Function URL: nothing can put the header back; clients find the metadata at the well-known URIs.

With a `Caller` (`dev --lambda --authorizer-claims FILE` or `--iam-caller ARN`), every event carries
the identity the front door's authorizer would have put on it, so auth `gateway` can be tried locally:
JWT claims as an HTTP API JWT authorizer (`authorizer.jwt`) or a REST API Cognito authorizer
(`authorizer.claims`) puts them, an IAM caller as `AWS_IAM` does on each front door.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from ..auth.metadata import AUTHORIZATION_SERVER_METADATA, CHALLENGE_COPY, WELL_KNOWN, challenge

ApiType = Literal["http", "rest", "url"]
API_TYPES: tuple[ApiType, ...] = ("http", "rest", "url")
REST_STAGE = "v1"
"""The REST API's stage in template.yaml."""
REST_ROUTES = frozenset(
    {"/mcp", WELL_KNOWN, WELL_KNOWN + "/mcp", AUTHORIZATION_SERVER_METADATA, "/.well-known/openid-configuration"}
)
"""The paths template.yaml routes on the REST API, with everything under `/oauth/` (its `/oauth/{proxy+}`);
every other path: 403 Missing Authentication Token."""
REMAPPED = {
    "http": frozenset({"www-authenticate"}),
    "url": frozenset({"www-authenticate"}),
    "rest": frozenset({"www-authenticate", "authorization", "connection", "content-md5", "max-forwards", "user-agent"}),
}

Invoke = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Caller:
    """Who an emulated gateway authorizer says is calling: a token's claims, or an IAM ARN."""

    claims: dict[str, Any] | None = None
    iam_arn: str | None = None

    def authorizer(self, api: ApiType) -> dict[str, Any]:
        """The `requestContext.authorizer` of an event on `api` (empty: REST puts IAM elsewhere)."""
        if self.iam_arn is not None:
            return {} if api == "rest" else {"iam": {"userArn": self.iam_arn, "callerId": "local"}}
        claims = dict(self.claims or {})
        if api == "rest":  # a Cognito user pool authorizer: claims only, every value a string
            return {"claims": {k: v if isinstance(v, str) else json.dumps(v) for k, v in claims.items()}}
        scope = claims.get("scope")
        return {"jwt": {"claims": claims, "scopes": scope.split() if isinstance(scope, str) else None}}

    def apply(self, event: dict[str, Any], api: ApiType) -> dict[str, Any]:
        context = event["requestContext"]
        authorizer = self.authorizer(api)
        if authorizer:
            context["authorizer"] = {**context.get("authorizer", {}), **authorizer}
        if api == "rest" and self.iam_arn is not None:
            context["identity"] = {**context.get("identity", {}), "userArn": self.iam_arn}
        return event


LOOPBACK = "127.0.0.1"
"""The source address of an event whose caller has no TCP peer to give (`lambda-mcp invoke`, tests)."""


@dataclass
class Call:
    """One HTTP request as the front door received it (header names lower-case), from `source_ip`: the
    TCP peer, which the front door puts in the event's `sourceIp` and Mangum in the ASGI scope's `client`."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes
    domain: str
    source_ip: str = LOOPBACK


@dataclass
class Reply:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


def http_api_event(
    method: str, target: str, headers: dict[str, str], body: bytes, domain: str, source_ip: str = LOOPBACK
) -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) event, as API Gateway would build it (a Function URL's is
    the same shape), from a caller at `source_ip`."""
    parts = urlsplit(target)
    now = datetime.now(UTC)
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": parts.path,
        "rawQueryString": parts.query,
        "headers": headers,
        "requestContext": {
            "accountId": "000000000000",
            "apiId": "local",
            "domainName": domain,
            "domainPrefix": domain.split(".")[0],
            "http": {
                "method": method,
                "path": parts.path,
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": headers.get("user-agent", ""),
            },
            "requestId": secrets.token_hex(8),
            "routeKey": "$default",
            "stage": "$default",
            "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now.timestamp() * 1000),
        },
        "body": base64.b64encode(body).decode() if body else None,
        "isBase64Encoded": bool(body),
    }


def rest_api_event(call: Call, path: str, authorizer: dict[str, Any] | None) -> dict[str, Any]:
    """An API Gateway REST API (payload 1.0) proxy event for `path` (the stage already taken off)."""
    query = parse_qsl(urlsplit(call.target).query, keep_blank_values=True)
    context: dict[str, Any] = {
        "resourceId": "local",
        "resourcePath": path,
        "httpMethod": call.method,
        "requestId": str(uuid.uuid4()),
        "accountId": "000000000000",
        "apiId": "local",
        "stage": REST_STAGE,
        "domainName": call.domain,
        "path": f"/{REST_STAGE}{path}",
        "identity": {"sourceIp": call.source_ip, "userAgent": call.headers.get("user-agent", "")},
        "protocol": "HTTP/1.1",
        "requestTimeEpoch": int(datetime.now(UTC).timestamp() * 1000),
    }
    if authorizer is not None:
        context["authorizer"] = authorizer
    return {
        "resource": path,
        "path": path,
        "httpMethod": call.method,
        "headers": call.headers,
        "multiValueHeaders": {k: [v] for k, v in call.headers.items()},
        "queryStringParameters": dict(query) or None,
        "multiValueQueryStringParameters": {k: [v for q, v in query if q == k] for k, _ in query} or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": context,
        "body": base64.b64encode(call.body).decode() if call.body else None,
        "isBase64Encoded": bool(call.body),
    }


def _reply(result: dict[str, Any], api: ApiType) -> Reply:
    """The function's response as the front door passes it on: headers it renames are renamed."""
    payload = result.get("body") or ""
    data = base64.b64decode(payload) if result.get("isBase64Encoded") else payload.encode()
    headers: list[tuple[str, str]] = []
    single = result.get("headers") or {}
    multi = result.get("multiValueHeaders") or {}
    for key, value in single.items():
        if key not in multi:
            headers.append((key, str(value)))
    for key, values in multi.items():
        headers.extend((key, str(v)) for v in values)
    headers.extend(("set-cookie", cookie) for cookie in result.get("cookies") or [])
    renamed = REMAPPED[api]
    headers = [(f"x-amzn-Remapped-{k}" if k.lower() in renamed else k, v) for k, v in headers]
    return Reply(int(result.get("statusCode", 200)), headers, data)


def _map_challenge(reply: Reply) -> Reply:
    """template.yaml's HTTP API response mapping: on 401 and 403, `WWW-Authenticate` from the kit's copy."""
    if reply.status not in (401, 403):
        return reply
    copy = next((v for k, v in reply.headers if k.lower() == CHALLENGE_COPY.lower()), None)
    if copy is None:
        return reply
    headers = [(k, v) for k, v in reply.headers if k.lower() != CHALLENGE_COPY.lower()]
    return Reply(reply.status, [*headers, ("WWW-Authenticate", copy)], reply.body)


def _json(status: int, document: dict[str, Any], headers: list[tuple[str, str]] | None = None) -> Reply:
    return Reply(status, [("content-type", "application/json"), *(headers or [])], json.dumps(document).encode())


class Gateway:
    """One emulated front door in front of `invoke` (the HTTP handler); REST also runs `authorize`."""

    def __init__(
        self, api: ApiType, invoke: Invoke, authorize: Invoke | None = None, caller: Caller | None = None
    ) -> None:
        self.api = api
        self.invoke = invoke
        self.authorize = authorize
        self.caller = caller

    def handle(self, call: Call) -> Reply:
        if self.api == "rest":
            return self._rest(call)
        event = http_api_event(call.method, call.target, call.headers, call.body, call.domain, call.source_ip)
        if self.caller is not None:
            event = self.caller.apply(event, self.api)
        reply = _reply(self.invoke(event), self.api)
        return _map_challenge(reply) if self.api == "http" else reply

    def _rest(self, call: Call) -> Reply:
        path = urlsplit(call.target).path
        prefix = f"/{REST_STAGE}"
        inner = path[len(prefix) :] if path.startswith(prefix + "/") else None
        if inner is None or (inner not in REST_ROUTES and not inner.startswith("/oauth/")):
            return _json(403, {"message": "Missing Authentication Token"})
        authorizer = None
        if inner == "/mcp" and self.authorize is not None:
            decided = self._authorize(call)
            if isinstance(decided, Reply):
                return decided
            authorizer = decided
        event = rest_api_event(call, inner, authorizer)
        if self.caller is not None and inner == "/mcp":
            event = self.caller.apply(event, "rest")
        return _reply(self.invoke(event), "rest")

    def _authorize(self, call: Call) -> dict[str, Any] | Reply:
        """The `TOKEN` authorizer template.yaml puts on `/mcp` (auth `jwt`), with its gateway responses."""
        assert self.authorize is not None
        # template.yaml builds the metadata URL from the canonical URL (`<base>/mcp`) it is given
        resource = os.environ.get("LAMBDA_MCP_AUTH_AUDIENCE") or os.environ.get("LAMBDA_MCP_RESOURCE_URL")
        base = (resource or f"http://{call.domain}/{REST_STAGE}/mcp").split("/mcp")[0]
        metadata = f"{base}{WELL_KNOWN}/mcp"
        scopes = os.environ.get("LAMBDA_MCP_AUTH_SCOPES", "").replace(",", " ").split()
        unauthorized = _json(
            401, {"message": "Unauthorized"}, [("WWW-Authenticate", challenge(metadata, scopes=scopes))]
        )
        token = call.headers.get("authorization")
        if not token:  # the identity source is missing: API Gateway answers without calling the authorizer
            return unauthorized
        method_arn = f"arn:aws:execute-api:us-east-1:000000000000:local/{REST_STAGE}/{call.method}/mcp"
        try:
            decision = self.authorize({"type": "TOKEN", "authorizationToken": token, "methodArn": method_arn})
        except Exception as exc:  # `Unauthorized` is the 401; any other error is AUTHORIZER_FAILURE
            if str(exc) == "Unauthorized":
                return unauthorized
            failure = {"message": "the authorization server is unavailable; retry"}
            return _json(503, failure, [("Retry-After", "15")])
        statement = decision["policyDocument"]["Statement"][0]
        if statement["Effect"] != "Allow":
            denied = challenge(metadata, error="insufficient_scope", scopes=scopes)
            message = "User is not authorized to access this resource with an explicit deny"
            return _json(403, {"Message": message}, [("WWW-Authenticate", denied)])
        return {"principalId": decision["principalId"], **decision.get("context", {}), "integrationLatency": 0}
