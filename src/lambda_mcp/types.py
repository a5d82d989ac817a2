"""The types a handler receives or returns, by their public names: what `ctx.elicit` and `ctx.sample`
answer with, and the content blocks a tool or prompt may return.

```python
from lambda_mcp.types import Elicitation, ImageContent, Sampled, TextContent
```

The rest of the package is the kit's inside, whatever a module's name: the public API is the package
root (`lambda_mcp`), `lambda_mcp.testing`, `lambda_mcp.middleware`, this module, and the Lambda
handlers `lambda_mcp.entrypoints.http.handler`, `.worker.handler` and `.authorizer.handler`.
"""

from .protocol.types import (
    Annotations,
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    Icon,
    ImageContent,
    PromptMessage,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from .server.elicitation import Elicitation, UnsupportedForm
from .server.sampling import Sampled

__all__ = [
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "CallToolResult",
    "ContentBlock",
    "Elicitation",
    "EmbeddedResource",
    "GetPromptResult",
    "Icon",
    "ImageContent",
    "PromptMessage",
    "ResourceLink",
    "Sampled",
    "TextContent",
    "TextResourceContents",
    "UnsupportedForm",
]
