"""The socket `lambda-mcp dev` and `lambda-mcp serve` listen on: their connections send small writes at once."""

from __future__ import annotations

import asyncio
import socket

from lambda_mcp.local.dev import listen


def test_accepted_connections_have_nagle_off() -> None:
    """asyncio sets TCP_NODELAY only on sockets that name IPPROTO_TCP; without it a response written in two
    parts waited for the client's delayed ACK (40 ms on every request after a connection's first)."""
    server_sock = listen("127.0.0.1", 0)
    seen: list[int] = []

    async def main() -> None:
        def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn: socket.socket = writer.get_extra_info("socket")
            seen.append(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(accepted, sock=server_sock)
        async with server:
            port = server_sock.getsockname()[1]
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
            for _ in range(100):
                if seen:
                    break
                await asyncio.sleep(0.01)
            writer.close()

    asyncio.run(main())
    assert seen and seen[0] != 0
