"""Who is calling: the authenticated principal API Gateway put on the event, if any."""

from __future__ import annotations

from typing import Any


def principal_of(scope: dict[str, Any] | Any) -> str | None:
    """`sub` of a JWT authorizer, else a Lambda authorizer's `principalId`, else IAM's user ARN; None if anonymous."""
    event = scope.get("aws.event") if isinstance(scope, dict) else None
    if not isinstance(event, dict):
        return None
    authorizer = event.get("requestContext", {}).get("authorizer")
    if not isinstance(authorizer, dict):
        return None
    claims = authorizer.get("jwt", {}).get("claims") or authorizer.get("claims") or {}
    for value in (claims.get("sub"), authorizer.get("principalId"), authorizer.get("lambda", {}).get("principalId")):
        if isinstance(value, str) and value:
            return value
    iam = authorizer.get("iam", {})
    arn = iam.get("userArn") if isinstance(iam, dict) else None
    return arn if isinstance(arn, str) else None
