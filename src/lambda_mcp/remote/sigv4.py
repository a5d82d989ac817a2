"""SigV4 request signing for IAM-authenticated endpoints (an API Gateway with IAM auth, a Lambda
Function URL with `AuthType: AWS_IAM`), with the standard AWS credential chain (environment, profile,
SSO, instance role...), through botocore, which is imported only when `--sigv4` is given."""

from __future__ import annotations

import os
from typing import Any

from ..server.outbound.auth import Outgoing, default_service, region_in_host, signature_headers
from .failures import RemoteFailure

__all__ = ["SigV4Signer", "default_service", "region_for"]


def region_for(url: str, given: str | None) -> str:
    """`--region`, else the region the host names, else the environment's (AWS_REGION, the profile)."""
    if given:
        return given
    if named := region_in_host(url):
        return named
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        if os.environ.get(name):
            return os.environ[name]
    region = _session().get_config_variable("region")
    if isinstance(region, str) and region:
        return region
    raise RemoteFailure("--sigv4 needs a region: pass --region (the host name does not say, nor does AWS_REGION)")


def _session() -> Any:
    try:
        import botocore.session
    except ImportError:
        raise RemoteFailure("--sigv4 needs botocore: pip install 'lambda-mcp[aws]' (or boto3)") from None
    return botocore.session.get_session()


class SigV4Signer:
    """Signs each request for `service` in `region` with the credentials the AWS chain finds."""

    def __init__(self, region: str, service: str) -> None:
        self.region = region
        self.service = service
        credentials = _session().get_credentials()
        if credentials is None:
            raise RemoteFailure(
                "--sigv4 found no AWS credentials (set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY,"
                " or run `aws sso login`)"
            )
        self.credentials = credentials

    def sign(self, method: str, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        try:
            return signature_headers(self.credentials, self.service, self.region, Outgoing(method, url, headers, body))
        except Exception as exc:  # botocore's credential providers raise their own kinds (expired SSO, ...)
            raise RemoteFailure(f"--sigv4 could not sign the request: {exc}") from None
