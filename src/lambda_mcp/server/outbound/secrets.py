"""Secret references: `secretsmanager:<name or ARN>` and `ssm:<parameter name>` read through Powertools
Parameters (cached `SECRET_MAX_AGE` seconds per process), any other value used as it is."""

from __future__ import annotations

SECRET_MAX_AGE = 300
PREFIXES = ("secretsmanager:", "ssm:")


def is_reference(value: str) -> bool:
    """Whether `value` names where a secret is kept rather than being the secret."""
    return value.startswith(PREFIXES)


def resolve(value: str) -> str:
    """The secret `value` names, or `value` itself (blocking: a reference is read from AWS on a cache miss)."""
    if not is_reference(value):
        return value
    from aws_lambda_powertools.utilities import parameters

    kind, _, where = value.partition(":")
    if kind == "ssm":
        return str(parameters.get_parameter(where, decrypt=True, max_age=SECRET_MAX_AGE))
    return str(parameters.get_secret(where, max_age=SECRET_MAX_AGE))


async def resolve_async(value: str) -> str:
    """`resolve` off the event loop when it may block (a reference); at once otherwise."""
    if not is_reference(value):
        return value
    import anyio

    return await anyio.to_thread.run_sync(resolve, value)
