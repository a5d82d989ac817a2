"""The id codec (`protocol/ids.py`), property-based: every id the kit mints parses back to the same
value, and any text either parses to the one value that formats back to it, or to nothing, never an
exception."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lambda_mcp.protocol import b64url
from lambda_mcp.protocol.ids import (
    CallInputId,
    CallStream,
    ChangesCursor,
    EventId,
    LiveInputId,
    LiveStream,
    TaskInputId,
    TaskStream,
    WaitStream,
    change_cursor,
    new_session_id,
    new_task_id,
    parse_event_id,
    parse_input_id,
    parse_last_event_id,
    parse_stream,
)
from lambda_mcp.protocol.limits import MAX_ID_BYTES

request_ids = st.one_of(
    st.text(max_size=128).filter(lambda text: len(text.encode(errors="replace")) <= MAX_ID_BYTES),
    st.integers(min_value=-(2**63 - 1), max_value=2**63 - 1),
)
tokens = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=40)
keys = st.text(max_size=40)
streams = st.one_of(
    request_ids.map(CallStream),
    st.builds(WaitStream, tokens, request_ids),
    tokens.map(TaskStream),
    st.just(None).map(lambda _: LiveStream.new()),
)
# text close to the kit's ids, so the parsers meet near misses, not only noise
near_misses = st.one_of(
    st.text(),
    st.text(alphabet="call~taskresult~live-s.0123456789abcdefXYZ_-=", max_size=60),
    st.builds(lambda s, cut: s[:cut], streams.map(lambda s: EventId.new(s.format(), 3).format()), st.integers(0, 80)),
)


@given(streams, st.integers(min_value=1, max_value=9_999_999_999))
def test_event_ids_round_trip_with_their_stream(
    stream: CallStream | WaitStream | TaskStream | LiveStream, seq: int
) -> None:
    minted = EventId.new(stream.format(), seq)
    parsed = parse_last_event_id(minted.format())
    assert parsed == minted and isinstance(parsed, EventId)
    assert parsed.kind == stream and parse_stream(stream.format()) == stream


@given(request_ids, keys, tokens)
def test_requests_to_the_client_round_trip(request_id: str | int, key: str, nonce: str) -> None:
    for minted in (CallInputId(CallStream(request_id), key, nonce), TaskInputId(nonce, key), LiveInputId(nonce)):
        assert parse_input_id(minted.format()) == minted


@given(st.floats(min_value=0, max_value=4e9), st.text(alphabet="abcdef0123456789", max_size=8))
def test_change_cursors_round_trip(moment: float, suffix: str) -> None:
    cursor = ChangesCursor(change_cursor(moment, suffix))
    assert parse_last_event_id(cursor.format()) == cursor


@given(near_misses)
def test_any_text_parses_to_the_one_value_that_formats_back_to_it_or_to_nothing(text: str) -> None:
    for parsed in (parse_last_event_id(text), parse_stream(text), parse_input_id(text)):
        assert parsed is None or parsed.format() == text


@given(st.one_of(st.none(), st.integers(), st.floats(), st.booleans(), st.lists(st.text())))
def test_only_strings_can_be_request_ids_of_ours(value: object) -> None:
    assert parse_input_id(value) is None


@given(st.text())
def test_base64url_accepts_only_what_it_encodes(text: str) -> None:
    decoded = b64url.decode_text(text)
    assert decoded is None or b64url.encode_text(decoded) == text


def test_near_misses_are_refused() -> None:
    call = CallStream("req-1").format()
    assert parse_event_id(f"{call}.1") is None  # no nonce
    assert parse_event_id(f"{call}.x.abcd") is None  # a sequence that is no number
    assert parse_event_id(f"{call}.12345678901.abcd") is None  # over 10 digits
    assert parse_event_id(f"{call}.1.ABCD") is None  # nonces are lower-case hex
    assert parse_event_id("x" * 600 + ".1.abcd") is None  # no stream is that long
    assert parse_last_event_id("changes~123") is None
    assert parse_stream("call~not base64") is None
    assert parse_stream("taskresult~task") is None
    assert parse_stream("live~xyz") is None
    assert parse_input_id("srv.call~.a2V5.nonce") is None  # an empty request id
    assert parse_input_id("task..a2V5") is None
    assert parse_input_id("s-") is None
    assert len(new_session_id()) == len(new_task_id()) == 32
