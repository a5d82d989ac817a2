"""Test settings: the app's tests run on asyncio, as the kit does in Lambda and in `lambda-mcp dev` (anyio's
pytest plugin would also run them on trio when trio is installed)."""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
