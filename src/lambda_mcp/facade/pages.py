"""The facade's HTML: the consent page and the error page (for a request it must not redirect).

Both are served with `X-Frame-Options: DENY`, a CSP that forbids framing and scripts (no
`form-action`: Chromium applies it to the redirects after the post, to the upstream and the client),
and `Cache-Control: no-store`; everything a client supplied is HTML-escaped.
"""

from __future__ import annotations

from html import escape
from urllib.parse import urlsplit

from starlette.responses import HTMLResponse

HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    "Cache-Control": "no-store",
    "Pragma": "no-cache",
    "Referrer-Policy": "no-referrer",
}
_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}"
    "button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.6rem}code{background:#eee;padding:0 .2rem}"
)


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    html = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f'<meta name="viewport" content="width=device-width"><style>{_STYLE}</style></head><body>{body}</body></html>'
    )
    return HTMLResponse(html, status, headers=HEADERS)


def consent_page(
    action: str, server: str, client_name: str, client_id: str, redirect_uri: str, scopes: list[str], txn: str
) -> HTMLResponse:
    host = urlsplit(redirect_uri).netloc.rpartition("@")[2] or redirect_uri.split(":", 1)[0]
    named = f"<strong>{escape(client_name)}</strong>"
    if client_name != client_id:
        named += f" (<code>{escape(client_id)}</code>)"
    scope_list = "".join(f"<li><code>{escape(s)}</code></li>" for s in scopes) or "<li>no scopes</li>"
    body = (
        f"<h1>Allow access to {escape(server)}?</h1>"
        f"<p>The application {named} wants to use <strong>{escape(server)}</strong> on your behalf.</p>"
        f'<p>After you sign in, you will be sent back to <strong id="redirect-host">{escape(host)}</strong>.'
        " Approve only if you started this sign-in from that application.</p>"
        f"<p>It asks for:</p><ul>{scope_list}</ul>"
        f'<form method="post" action="{escape(action)}">'
        f'<input type="hidden" name="txn" value="{escape(txn)}">'
        '<button type="submit" name="decision" value="approve" id="approve">Approve</button>'
        '<button type="submit" name="decision" value="deny" id="deny">Deny</button>'
        "</form>"
    )
    return _page(f"Allow {client_name}?", body)


def error_page(title: str, detail: str, status: int = 400) -> HTMLResponse:
    body = (
        f"<h1>{escape(title)}</h1><p>{escape(detail)}</p><p>Close this window and try again from the application.</p>"
    )
    return _page(title, body, status)
