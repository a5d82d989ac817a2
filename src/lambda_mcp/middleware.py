"""What an app's middleware works with: `Request`, `CallNext`, `Middleware` (see `MCPApp.middleware`)."""

from .server.middleware import CallNext, Middleware, Request

__all__ = ["CallNext", "Middleware", "Request"]
