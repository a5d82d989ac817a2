"""Fixtures of the infra tests."""

from __future__ import annotations

import pytest

from tests.infra.builds import sam_environment


@pytest.fixture(scope="session")
def sam_env() -> dict[str, str]:
    """The environment AWS SAM CLI runs in, offline (fails clearly when ./scripts/test has not set it up)."""
    return sam_environment()
