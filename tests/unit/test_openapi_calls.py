"""Calls of `app.openapi` tools against the stand-in API on loopback: a header read from a secret (SSM under
in-process moto) and the `headers=` sent on every call, a slow API past `timeout=` and an unreachable one
(tool errors naming the host), and a tool that fails never answering with a protocol error."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from lambda_mcp import MCPApp
from lambda_mcp.outbound import Header, bearer
from lambda_mcp.testing import Client
from tests.support.petstore_api import PetstoreAPI
from tests.support.processes import ROOT, free_port

pytestmark = pytest.mark.anyio
PETSTORE = ROOT / "tests/apps/openapi/petstore-3.1.json"


@pytest.fixture(scope="module")
def api() -> Iterator[PetstoreAPI]:
    served = PetstoreAPI()
    yield served
    served.stop()


async def test_a_header_read_from_an_ssm_secret_and_the_fixed_headers_reach_the_api(api: PetstoreAPI) -> None:
    name = f"/petstore/key-{secrets.token_hex(4)}"
    with mock_aws():
        boto3.client("ssm").put_parameter(Name=name, Value="k-123", Type="SecureString")
        app = MCPApp("petstore")
        app.openapi(
            PETSTORE,
            base_url=api.base_url,
            auth=Header("X-Api-Key", f"ssm:{name}"),
            headers={"X-Client": "lambda-mcp"},
            paths=["/pets/{petId}"],
            methods=["get"],
        )
        async with Client(app) as client:
            found = await client.call_tool("showPetById", {"petId": "1"})
    assert not found.is_error and found.structured_content is not None and found.structured_content["name"] == "Rex"
    seen = api.last()
    assert (seen.method, seen.path) == ("GET", "/pets/1")
    assert seen.headers["x-api-key"] == "k-123" and seen.headers["x-client"] == "lambda-mcp"


async def test_a_secret_that_cannot_be_read_is_a_tool_error_and_nothing_is_sent(api: PetstoreAPI) -> None:
    with mock_aws():
        app = MCPApp("petstore")
        auth = bearer(f"ssm:/petstore/missing-{secrets.token_hex(4)}")
        app.openapi(PETSTORE, base_url=api.base_url, auth=auth, paths=["/health"])
        before = len(api.received)
        async with Client(app) as client:
            failed = await client.call_tool("get_health")
    assert failed.is_error and failed.text is not None
    assert failed.text.startswith("could not read the secret for the Authorization header")
    assert len(api.received) == before


async def test_an_api_slower_than_the_timeout_is_a_tool_error_naming_its_host(api: PetstoreAPI) -> None:
    app = MCPApp("petstore")
    app.openapi(PETSTORE, base_url=api.base_url, paths=["/slow"], timeout=0.3)
    started = time.monotonic()
    async with Client(app) as client:
        late = await client.call_tool("slow")
    assert late.is_error and late.text == f"127.0.0.1:{api.url.rsplit(':', 1)[1]} did not answer GET /slow within 0.3 s"
    assert time.monotonic() - started < 2


async def test_an_unreachable_api_is_a_tool_error_naming_its_host() -> None:
    port = free_port()  # nothing listens there
    app = MCPApp("petstore")
    app.openapi(PETSTORE, base_url=f"http://127.0.0.1:{port}/v1", paths=["/pets"])
    async with Client(app, raise_exceptions=True) as client:  # an unexpected exception would be raised here
        failed = await client.call_tool("listPets", {"limit": 1})
    assert failed.is_error and failed.text is not None
    assert failed.text.startswith(f"could not reach 127.0.0.1:{port} for GET /pets: ConnectError")
    assert "Traceback" not in failed.text
