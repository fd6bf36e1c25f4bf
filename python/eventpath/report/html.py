"""The report's HTML: a page frame, tables and figures, every text escaped.

Static files only — no script, no web font, no request outside the directory — so a page opens
from the disk in any browser (and in the test's headless Chromium without a single failed
request).
"""

from __future__ import annotations

from html import escape
from typing import Iterable

#: The navigation bar's pages: (file, title); a page a report does not have is left out.
NAV = (("index.html", "Overview"), ("scorecard.html", "Scorecard"), ("compare.html", "Head to head"),
       ("kvm.html", "Testbed"), ("profiles.html", "Profiles"))

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1320px; padding: 0 16px 40px; color: #222; }
nav { border-bottom: 1px solid #ccc; padding: 10px 0; margin-bottom: 12px; }
nav a { margin-right: 16px; text-decoration: none; color: #1f4e9c; }
nav a.here { font-weight: 600; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; } h3 { font-size: 15px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.ok { background: #e6f4e6; } td.miss { background: #fbe4e4; }
td.src { font-size: 12px; color: #444; max-width: 640px; }
figure { margin: 12px 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 12px; color: #555; }
.made { font-size: 12px; color: #666; border-top: 1px solid #ddd; margin-top: 32px; padding-top: 8px; }
.note { color: #555; font-size: 13px; }
"""


def page(title: str, here: str, body: str, made: str, pages: Iterable[str]) -> str:
    """A whole page: the navigation (the pages this report has), ``body`` (already HTML) and the
    line saying how it was made."""
    have = set(pages)
    nav = " ".join(f'<a href="{f}"{" class=here" if f == here else ""}>{escape(t)}</a>'
                   for f, t in NAV if f in have)
    return (f"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<meta name=viewport content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(title)} · eventpath report</title><style>{_CSS}</style></head>\n"
            f"<body><nav>{nav}</nav>\n<h1>{escape(title)}</h1>\n{body}\n"
            f"<p class=made>{made}</p></body></html>\n")


def num(v, digits: int = 4) -> str:
    """A number as a reader wants it: thousands separated, ``digits`` significant figures;
    an absent value is an empty cell, not "n/a"."""
    if v is None:
        return ""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return escape(str(v))
    if v != v:  # NaN
        return ""
    if abs(v) >= 10 ** digits:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def table(header: list[str], rows: Iterable[list], classes: list[str] | None = None) -> str:
    """A table; a cell is a str (escaped), a number (right-aligned), or ``(html, class)`` for a
    cell already HTML (a link) with its class."""
    out = ["<table><thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr></thead><tbody>"]
    for row in rows:
        cells = []
        for i, c in enumerate(row):
            cls = (classes[i] if classes and i < len(classes) else "")
            if isinstance(c, tuple):
                text, cls = c
            elif isinstance(c, (int, float)) or c is None:
                text, cls = num(c), cls or "num"
            else:
                text = escape(str(c))
            cells.append(f"<td class={cls}>{text}</td>" if cls else f"<td>{text}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def figure(src: str, alt: str, caption: str = "") -> str:
    cap = f"<figcaption>{escape(caption)}</figcaption>" if caption else ""
    return f'<figure><img src="{escape(src)}" alt="{escape(alt)}" loading=eager>{cap}</figure>'


def link(href: str, text: str) -> str:
    return f'<a href="{escape(href)}">{escape(text)}</a>'


def para(text: str, cls: str = "") -> str:
    return f"<p class={cls}>{escape(text)}</p>" if cls else f"<p>{escape(text)}</p>"
