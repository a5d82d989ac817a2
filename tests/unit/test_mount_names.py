"""How a mounted server's names and URIs are prefixed and read back (`server/mount/names.py`)."""

from __future__ import annotations

import pytest

from lambda_mcp.server.errors import DeclarationError
from lambda_mcp.server.mount.names import checked_prefix, prefixed, prefixed_uri, unprefixed, unprefixed_uri


def test_names_gain_the_prefix_and_lose_it_again() -> None:
    assert prefixed("vendor", "search") == "vendor_search"
    assert unprefixed("vendor", "vendor_search") == "search"
    assert unprefixed("vendor", "vendor_snake_case") == "snake_case"  # only the first `_` splits
    assert unprefixed("vendor", "vendors_search") is None
    assert unprefixed("vendor", "vendor_") is None
    assert unprefixed("vendor", "other_search") is None


def test_a_name_that_would_break_the_tool_name_rules_is_not_made() -> None:
    assert prefixed("vendor", "x" * 122) is None  # 128 characters at most
    assert prefixed("vendor", "has space") is None
    assert prefixed("vendor", "x" * 121) == "vendor_" + "x" * 121


def test_uris_gain_the_prefix_after_the_scheme() -> None:
    assert prefixed_uri("vendor", "docs://guide/intro") == "docs://vendor/guide/intro"
    assert prefixed_uri("vendor", "vendor://items/{id}") == "vendor://vendor/items/{id}"
    assert prefixed_uri("vendor", "urn:isbn:123") is None  # nothing to put the prefix after
    assert unprefixed_uri("vendor", "docs://vendor/guide/intro") == "docs://guide/intro"
    assert unprefixed_uri("vendor", "docs://other/guide") is None
    assert unprefixed_uri("vendor", "docs://vendorish/guide") is None


@pytest.mark.parametrize("prefix", ["", "_x", "a_b", "-x", "x" * 33, "sp ace"])
def test_a_prefix_is_letters_digits_and_dashes(prefix: str) -> None:
    with pytest.raises(DeclarationError):
        checked_prefix(prefix, [])


def test_a_prefix_is_used_once() -> None:
    assert checked_prefix("a-1", ["b"]) == "a-1"
    with pytest.raises(DeclarationError, match="already mounted"):
        checked_prefix("b", ["b"])
