"""The caller API Gateway (or a Function URL) authenticated, read from the Lambda event (auth `gateway`).

| front door and authorizer | where the identity is |
|---|---|
| HTTP API, JWT authorizer | `requestContext.authorizer.jwt.claims` (`iss`, `sub`), scopes in `…jwt.scopes` |
| REST API, Cognito user pool authorizer | `requestContext.authorizer.claims` |
| REST API, Lambda authorizer | `requestContext.authorizer.principalId` (scopes: a `scope` context key) |
| HTTP API, Lambda authorizer | `requestContext.authorizer.lambda` (`principalId`, `principal` or `sub` key) |
| HTTP API or Function URL, `AWS_IAM` | `requestContext.authorizer.iam.userArn` |
| REST API, `AWS_IAM` | `requestContext.identity.userArn` |

An event that names no identity fails closed: the kit answers 401, never serves it anonymously.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .identity import Identity, jwt_principal, scopes_of


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def gateway_identity(event: object) -> Identity | None:
    """The identity an authorizer put on `event`, or None when there is none (or it is unusable)."""
    context = _object(_object(event).get("requestContext"))
    authorizer = _object(context.get("authorizer"))
    jwt = _object(authorizer.get("jwt"))
    if jwt:
        return _from_claims(_object(jwt.get("claims")), jwt.get("scopes"))
    iam = _object(authorizer.get("iam"))
    if iam:
        return _from_arn(iam.get("userArn"))
    lambda_context = _object(authorizer.get("lambda"))
    if lambda_context:
        return _from_lambda_authorizer(lambda_context)
    claims = _object(authorizer.get("claims"))
    if claims:  # REST API Cognito (or JWT) authorizer
        return _from_claims(claims, None)
    if isinstance(authorizer.get("principalId"), str):  # REST API Lambda authorizer
        return _from_lambda_authorizer(authorizer)
    return _from_arn(_object(context.get("identity")).get("userArn"))  # REST API AWS_IAM


def _from_claims(claims: Mapping[str, Any], scopes: object) -> Identity | None:
    principal = jwt_principal(claims)
    if principal is None:
        return None
    granted = scopes_of(scopes) if scopes else scopes_of(claims.get("scope") or claims.get("scp"))
    return Identity(principal, granted, dict(claims))


def _from_arn(arn: object) -> Identity | None:
    if isinstance(arn, str) and arn.startswith("arn:"):
        return Identity(arn, frozenset())
    return None


def _from_lambda_authorizer(context: Mapping[str, Any]) -> Identity | None:
    for key in ("principalId", "principal", "sub"):
        value = context.get(key)
        if isinstance(value, str) and value:
            return Identity(f"lambda-authorizer#{value}", scopes_of(context.get("scope")), dict(context))
    return None
