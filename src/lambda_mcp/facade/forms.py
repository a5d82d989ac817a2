"""Read the facade's form posts (the consent decision, the token and revocation requests): bodies of
`application/x-www-form-urlencoded`, parsed here with the standard library.

Starlette's `Request.form()` needs `python-multipart` even for urlencoded bodies, and a deployment has
only the kit's runtime dependencies (the layer's lock), so the facade never calls it. A parameter sent
twice is refused (RFC 6749 §3.1: "parameters MUST NOT be included more than once").
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from .errors import OAuthError

FORM_TYPE = "application/x-www-form-urlencoded"
MAX_FIELDS = 64


def form_fields(body: bytes, content_type: str | None) -> dict[str, str]:
    """The fields of a urlencoded `body`; `OAuthError(invalid_request)` for another content type, bytes
    that are not UTF-8, too many fields, or a field sent twice."""
    media = (content_type or FORM_TYPE).split(";", 1)[0].strip().lower()
    if media != FORM_TYPE:
        raise OAuthError("invalid_request", f"the body must be {FORM_TYPE}")
    try:
        text = body.decode()
        pairs = parse_qsl(text, keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except (UnicodeDecodeError, ValueError):
        raise OAuthError("invalid_request", "the form is not valid UTF-8 urlencoded text") from None
    fields: dict[str, str] = {}
    for name, value in pairs:
        if name in fields:
            raise OAuthError("invalid_request", "a parameter is included more than once")
        fields[name] = value
    return fields
