"""MCP wire shapes that handlers build and return: content blocks, resource contents, results.

Lean pydantic v2 models with camelCase aliases; the kit serialises them with
`dump()` and shapes the dict for the negotiated revision in `protocol.shaping`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

Role = Literal["user", "assistant"]


class WireModel(BaseModel):
    """Base of every wire model: camelCase on the wire, snake_case in Python, `_meta` as `meta`."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    def dump(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class Annotations(WireModel):
    audience: list[Role] | None = None
    priority: float | None = Field(default=None, ge=0, le=1)
    last_modified: str | None = None


class Icon(WireModel):
    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None


class _Block(WireModel):
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class TextContent(_Block):
    type: Literal["text"] = "text"
    text: str


class ImageContent(_Block):
    type: Literal["image"] = "image"
    data: str
    mime_type: str


class AudioContent(_Block):
    type: Literal["audio"] = "audio"
    data: str
    mime_type: str


class ResourceLink(_Block):
    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: list[Icon] | None = None


class TextResourceContents(WireModel):
    uri: str
    text: str
    mime_type: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class BlobResourceContents(WireModel):
    uri: str
    blob: str
    mime_type: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class EmbeddedResource(_Block):
    type: Literal["resource"] = "resource"
    resource: TextResourceContents | BlobResourceContents


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
CONTENT_BLOCKS = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)


class CallToolResult(WireModel):
    content: list[ContentBlock] = Field(default_factory=list)
    structured_content: Any = None
    is_error: bool | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class PromptMessage(WireModel):
    role: Role
    content: ContentBlock


class GetPromptResult(WireModel):
    messages: list[PromptMessage]
    description: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
