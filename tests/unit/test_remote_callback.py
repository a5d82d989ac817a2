"""`--login`'s loopback listener (`lambda_mcp.remote.login.Callback`): only the redirect carrying the
sign-in's `state` ends the wait; another one (another tab, another program on the computer) is refused
and changes nothing; a port another program holds is replaced by a free one unless it is fixed."""

from __future__ import annotations

import socket
import threading

import httpx
import pytest

from lambda_mcp.remote.failures import RemoteFailure
from lambda_mcp.remote.login import Callback


def test_only_the_sign_ins_own_state_ends_the_wait() -> None:
    with Callback(0, "/callback") as callback:
        callback.expect("s1")
        assert callback.redirect_uri.startswith("http://127.0.0.1:") and callback.redirect_uri.endswith("/callback")
        other = httpx.get(callback.redirect_uri, params={"code": "stolen", "state": "s0"})
        odd = httpx.get(callback.redirect_uri, params={"code": "x", "state": "é"})  # not ASCII: refused, no crash
        elsewhere = httpx.get(callback.redirect_uri.replace("/callback", "/favicon.ico"))
        assert (other.status_code, odd.status_code, elsewhere.status_code) == (400, 400, 404)
        with pytest.raises(RemoteFailure, match="no sign-in came back within 0 s"):
            callback.wait(0.3)
        threading.Timer(0.2, lambda: httpx.get(callback.redirect_uri, params={"code": "c1", "state": "s1"})).start()
        assert callback.wait(10) == {"code": "c1", "state": "s1"}


def test_a_port_in_use_is_replaced_unless_it_is_fixed() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with Callback(port, "/cb") as callback:
            assert f":{port}/" not in callback.redirect_uri and callback.redirect_uri.endswith("/cb")
        with pytest.raises(RemoteFailure, match=f"cannot listen on 127.0.0.1:{port}"):
            Callback(port, "/cb", fixed=True)
