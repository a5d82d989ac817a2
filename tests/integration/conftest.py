"""Fixtures for the integration tests: a buffered kit serving the conformance fixture app over ASGI, and a
schema-checking recorder that fails the test on any violation."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.support.client import MCPTestClient, conformance_kit
from tests.support.recorder import Recorder


@pytest.fixture
async def client() -> AsyncIterator[MCPTestClient]:
    test_client = MCPTestClient(conformance_kit())
    yield test_client
    await test_client.close()
    assert test_client.recorder.violations == [], test_client.recorder.violations


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    checked = Recorder()
    yield checked
    assert checked.violations == [], checked.violations
