"""The facade's HTML: the consent page and the error page (for a request it must not redirect).

Both are served with `X-Frame-Options: DENY`, a CSP that forbids framing and scripts (no
`form-action`: Chromium applies it to the redirects after the post, to the upstream and the client),
and `Cache-Control: no-store`; everything a client supplied is HTML-escaped.

The consent page says only what the facade knows: the client's name is shown as the application gives
it, not as verified; where the code goes is the redirect URI's ASCII host and port (a `web` redirect),
the whole URI and the app that claimed its scheme (`app`), or a program on this computer (`loopback`).
Approve needs a ticked box ("I started this sign-in from ..."), so a click that lands on the page
(double-clickjacking: a page that swaps itself for this one between two clicks) cannot approve; Deny
needs nothing (`formnovalidate`).
"""

from __future__ import annotations

from html import escape

from starlette.responses import HTMLResponse

from .redirects import Destination

HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    "Cache-Control": "no-store",
    "Pragma": "no-cache",
    "Referrer-Policy": "no-referrer",
}
CONFIRM = "confirm"
"""The consent form's checkbox: Approve counts only with `confirm=yes`."""
_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;color:#222}"
    "button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.6rem}code{background:#eee;padding:0 .2rem;"
    "word-break:break-all}.warn{border-left:4px solid #c60;padding:.2rem .8rem;background:#fff6ec}"
    "label{display:block;margin:1rem 0}"
)


def _page(title: str, body: str, status: int = 200, headers: dict[str, str] | None = None) -> HTMLResponse:
    html = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f'<meta name="viewport" content="width=device-width"><style>{_STYLE}</style></head><body>{body}</body></html>'
    )
    return HTMLResponse(html, status, headers={**HEADERS, **(headers or {})})


def _where(to: Destination) -> str:
    shown = f'<code id="redirect-host">{escape(to.shown)}</code>'
    if to.kind == "web":
        return f"<p>After you sign in, you will be sent back to {shown}.</p>"
    if to.kind == "loopback":
        return (
            f"<p>After you sign in, you will be sent back to {shown}.</p>"
            '<p class="warn" id="redirect-warning"><strong>The code goes to a program on this computer</strong>'
            " (whatever listens on that port). Approve only if you just started this sign-in from an"
            " application on this computer.</p>"
        )
    return (
        f"<p>After you sign in, you will be sent to {shown}.</p>"
        '<p class="warn" id="redirect-warning"><strong>An application on this device gets the code</strong>:'
        " whichever one claimed that address. Approve only if you just started this sign-in from that"
        " application.</p>"
    )


def consent_page(
    action: str,
    server: str,
    client_name: str | None,
    client_id: str,
    to: Destination,
    scopes: list[str],
    txn: str,
) -> HTMLResponse:
    named = f"<strong>{escape(client_name)}</strong>" if client_name else f"<code>{escape(client_id)}</code>"
    ident = f" (client id <code>{escape(client_id)}</code>)" if client_name else ""
    scope_list = "".join(f"<li><code>{escape(s)}</code></li>" for s in scopes) or "<li>no scopes</li>"
    origin = {
        "web": escape(to.shown),
        "loopback": f"an application on this computer ({escape(to.shown)})",
        "app": f"the application that opens {escape(to.shown)}",
    }[to.kind]
    body = (
        f"<h1>Allow access to {escape(server)}?</h1>"
        f"<p>An application that calls itself {named}{ident} wants to use <strong>{escape(server)}</strong>"
        " on your behalf. <em>The name is the application's own and is not verified.</em></p>"
        f"{_where(to)}"
        f"<p>It asks for:</p><ul>{scope_list}</ul>"
        f'<form method="post" action="{escape(action)}">'
        f'<input type="hidden" name="txn" value="{escape(txn)}">'
        f'<label><input type="checkbox" name="{CONFIRM}" value="yes" id="{CONFIRM}" required>'
        f" I started this sign-in from {origin}.</label>"
        '<button type="submit" name="decision" value="approve" id="approve">Approve</button>'
        '<button type="submit" name="decision" value="deny" id="deny" formnovalidate>Deny</button>'
        "</form>"
    )
    return _page(f"Allow {client_name or 'this application'}?", body)


def message_page(title: str, text: str, extra_html: str = "") -> HTMLResponse:
    """A page that says one thing (`text`, escaped), with `extra_html` the caller built (escaped already)."""
    return _page(title, f"<h1>{escape(title)}</h1><p>{escape(text)}</p>{extra_html}")


def error_page(title: str, detail: str, status: int = 400, retry_after: int | None = None) -> HTMLResponse:
    body = (
        f"<h1>{escape(title)}</h1><p>{escape(detail)}</p><p>Close this window and try again from the application.</p>"
    )
    return _page(title, body, status, {"Retry-After": str(retry_after)} if retry_after else None)
