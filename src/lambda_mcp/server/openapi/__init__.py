"""OpenAPI operations as tools (`app.openapi`): the document read and checked (`document.py`), its `$ref`s
(`refs.py`) and schemas (`schemas.py`), its operations walked and filtered (`operations.py`), tool names
(`naming.py`), media types (`media.py`), each operation's arguments (`inputs.py`) and answers
(`outputs.py`), a call's request (`outgoing.py`) and run (`calls.py`), and the tools with their report
(`build.py`). Imported only by an app that calls `app.openapi` (and by `lambda-mcp openapi check`)."""
