"""Records read back from storage (issue 41, finding 5): a field this release does not know (written by a
later one, then rolled back) is dropped with a warning, never a crash."""

from __future__ import annotations

import json
import logging
import secrets

import pytest

from lambda_mcp.storage.records import TaskRecord


def _record() -> TaskRecord:
    return TaskRecord(
        task_id="t" + secrets.token_hex(4),
        owner="principal:u",
        method="tools/call",
        params={"name": "x", "arguments": {}},
        created_at=1000.0,
        expires_at=5000.0,
        ttl_ms=4_000_000,
        poll_interval_ms=500,
        scopes=["a"],
        claims={"sub": "u"},
        attempts=2,
        due_at=1900.0,
    )


def test_every_stored_field_reads_back() -> None:
    record = _record()
    assert TaskRecord.from_stored(json.loads(json.dumps(record.as_dict()))) == record


def test_an_unknown_field_is_dropped_with_one_warning_per_field(caplog: pytest.LogCaptureFixture) -> None:
    record = _record()
    field = "added_later_" + secrets.token_hex(4)
    stored = {**record.as_dict(), field: {"x": 1}}
    with caplog.at_level(logging.WARNING, logger="lambda_mcp"):
        assert TaskRecord.from_stored(stored) == record
        assert TaskRecord.from_stored(stored) == record
    warned = [r for r in caplog.records if field in r.getMessage()]
    assert len(warned) == 1 and record.task_id in warned[0].getMessage()  # not once per read


def test_a_missing_required_field_still_raises() -> None:
    stored = _record().as_dict()
    del stored["owner"]
    with pytest.raises(TypeError):
        TaskRecord.from_stored(stored)
