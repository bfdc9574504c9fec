"""`verify` on hostile requests: whatever a receiver is handed (text with lone surrogates, bytes
that are not UTF-8, header values as bytes, absurd timestamps), it returns the webhook id or
raises `SignatureError`, never a raw `UnicodeEncodeError`, `OverflowError` or `TypeError`. A
malformed secret is the receiver's own configuration: a `ConfigError`, not a 400."""

from __future__ import annotations

import pytest
from hymem.core.errors import ConfigError, HymemError
from hymem.ops.webhooks import SignatureError, sign, verify
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
NOW = 1_700_000_000
NAMES = ("webhook-id", "webhook-timestamp", "webhook-signature")


@pytest.mark.parametrize(
    ("webhook_id", "body"),
    [
        ("\ud800", b"{}"),
        ("evt_1", "\ud800"),
        ("evt_\udfff", '{"id":"\udc80"}'),
        (b"evt_\xff", b"{}"),
    ],
)
def test_a_lone_surrogate_or_bad_utf8_is_a_signature_error(
    webhook_id: str | bytes, body: str | bytes
) -> None:
    headers = {**sign(SECRET, "evt_1", b"{}", timestamp=NOW), "webhook-id": webhook_id}
    with pytest.raises(SignatureError):
        verify(SECRET, headers, body, now=NOW)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("webhook-timestamp", "9" * 400),  # int() takes it; float arithmetic overflowed
        ("webhook-timestamp", "1" * 5000),  # past int()'s digit limit
        ("webhook-timestamp", "\ud800"),
        ("webhook-timestamp", b"\xff"),
        ("webhook-signature", "v1,\ud800"),
        ("webhook-signature", b"v1,\xff\xfe"),
        ("webhook-signature", 42),
        ("webhook-id", None),
    ],
)
def test_any_header_value_is_refused_with_a_signature_error(name: str, value: object) -> None:
    headers: dict[str, object] = {**sign(SECRET, "evt_1", b"{}", timestamp=NOW), name: value}
    with pytest.raises(SignatureError):
        verify(SECRET, headers, b"{}", now=float(NOW))  # type: ignore[arg-type]


def test_header_values_as_bytes_verify_like_text() -> None:
    body = b'{"id":"evt_1"}'
    headers = sign(SECRET, "evt_1", body, timestamp=NOW)
    raw = {k.encode(): v.encode() for k, v in headers.items()}
    assert verify(SECRET, raw, body, now=NOW) == "evt_1"


@pytest.mark.parametrize("secret", ["whsec_***", "\ud800" * 20, b"bytes-secret-of-enough-length"])
def test_a_malformed_secret_is_a_config_error(secret: object) -> None:
    headers = sign(SECRET, "evt_1", b"{}", timestamp=NOW)
    with pytest.raises(ConfigError):
        verify(secret, headers, b"{}", now=NOW)  # type: ignore[arg-type]


# Lone surrogates are half of the characters drawn: hypothesis leaves them out by default.
any_text = st.text(alphabet=st.one_of(st.characters(), st.characters(categories=["Cs"])))
text_or_bytes = st.one_of(any_text, st.binary())
header_name = st.one_of(
    st.sampled_from(NAMES), st.sampled_from([n.upper() for n in NAMES]), text_or_bytes
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    headers=st.dictionaries(header_name, text_or_bytes, max_size=5),
    body=text_or_bytes,
)
@example(
    headers={"webhook-id": "\ud800", "webhook-timestamp": str(NOW), "webhook-signature": "v1,x"},
    body=b"",
)
@example(
    headers={"webhook-id": "a", "webhook-timestamp": str(NOW), "webhook-signature": "v1,x"},
    body="\ud800",
)
def test_verify_on_any_request_returns_an_id_or_raises_signature_error(
    headers: dict[str | bytes, str | bytes], body: str | bytes
) -> None:
    try:
        got = verify(SECRET, headers, body, now=float(NOW))  # type: ignore[arg-type]
    except SignatureError:
        return
    assert isinstance(got, str)


@settings(max_examples=200, deadline=None)
@given(webhook_id=any_text.filter(bool), body=text_or_bytes, stamp=any_text)
def test_verify_on_signed_requests_with_any_id_body_or_stamp(
    webhook_id: str, body: str | bytes, stamp: str
) -> None:
    # Headers that are well-formed except for what hypothesis puts in them.
    try:
        headers = sign(SECRET, webhook_id, body, timestamp=NOW)
    except HymemError:  # an id or body that is not UTF-8 text cannot be signed either
        headers = {"webhook-id": webhook_id, "webhook-timestamp": str(NOW)}
        headers["webhook-signature"] = "v1,AAAA"
    for variant in (headers, {**headers, "webhook-timestamp": stamp}):
        try:
            got = verify(SECRET, variant, body, now=float(NOW))
        except SignatureError:
            continue
        assert got == webhook_id
