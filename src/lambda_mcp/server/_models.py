"""Find the wire models and pydantic only if something already imported them.

A handler's value can be an instance of `protocol.types` (or of any pydantic model) only when its
module is loaded, so the kit looks in `sys.modules` rather than importing them: pydantic stays off the
cold path of apps that return plain values.
"""

from __future__ import annotations

import sys
from types import ModuleType


def loaded_wire_types() -> ModuleType | None:
    """`lambda_mcp.protocol.types`, if imported."""
    return sys.modules.get("lambda_mcp.protocol.types")


def loaded_pydantic() -> ModuleType | None:
    """`pydantic`, if imported."""
    return sys.modules.get("pydantic")
