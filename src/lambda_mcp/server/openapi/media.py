"""Media types as the calls see them: JSON (`application/json`, `*+json`), a form
(`application/x-www-form-urlencoded`), text (`text/*`, XML, YAML), images, and anything else."""

from __future__ import annotations

FORM = "application/x-www-form-urlencoded"
_TEXT = ("application/xml", "application/yaml", "application/x-yaml", "application/javascript")


def essence(media_type: str) -> str:
    """`type/subtype` in lower case, without parameters (`; charset=...`)."""
    return media_type.split(";", 1)[0].strip().lower()


def is_json(media_type: str) -> bool:
    kind = essence(media_type)
    return kind == "application/json" or kind.endswith("+json")


def is_form(media_type: str) -> bool:
    return essence(media_type) == FORM


def is_text(media_type: str) -> bool:
    """Text a client can read as it is (JSON counts too)."""
    kind = essence(media_type)
    return kind.startswith("text/") or kind in _TEXT or kind.endswith("+xml") or is_json(kind)


def charset(media_type: str) -> str:
    """The `charset` parameter, else UTF-8."""
    for part in media_type.split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"')
    return "utf-8"
