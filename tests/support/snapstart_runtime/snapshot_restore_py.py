"""A stand-in for `snapshot_restore_py`, the library the Lambda Python runtimes (3.12+) include for SnapStart's
runtime hooks: the same two registration functions (as decorators or calls with arguments), which record the
hooks, and what the runtime does with them, for tests that emulate a snapshot and its restores
(tests/integration/test_snapstart.py): `run_before_snapshot` calls the before-snapshot hooks in the reverse order
of their registration, `run_after_restore` the after-restore hooks in their order, as Lambda documents.

Put this directory on `sys.path` (PYTHONPATH) for the kit to find it; nothing else provides the module outside
Lambda, so the kit registers no hooks there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Hook = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]
before_snapshot: list[Hook] = []
after_restore: list[Hook] = []


def register_before_snapshot(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., Any]:
    before_snapshot.append((func, args, kwargs))
    return func


def register_after_restore(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., Any]:
    after_restore.append((func, args, kwargs))
    return func


def run_before_snapshot() -> None:
    """What Lambda does once the init code ran, before it takes the snapshot."""
    for func, args, kwargs in reversed(before_snapshot):
        func(*args, **kwargs)


def run_after_restore() -> None:
    """What Lambda does in each environment it resumes from the snapshot, before its first invocation."""
    for func, args, kwargs in after_restore:
        func(*args, **kwargs)
