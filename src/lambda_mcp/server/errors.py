"""`ToolError`: the exception a handler raises to fail with a message meant for the user."""


class ToolError(Exception):
    """Raise it from a tool to fail the call with a message meant for the user: the client gets it as
    the text of an `isError` result. Any other exception is logged with its traceback, and the client
    gets only a generic message with a reference id (tracebacks and internal details stay in the logs)."""
