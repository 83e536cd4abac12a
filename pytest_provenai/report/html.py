"""The self-contained HTML report (and the comparison page), rendered with Jinja2.

One file: CSS, the page script and every chart (SVG) are inline, the cases travel as JSON
inside the page, and a Content-Security-Policy allows no network at all and no script but
the page's own (pinned by its sha256), so text from a model or a fixture can never run as
code. Autoescaping is on for every template; the embedded JSON escapes ``<``, ``>`` and ``&``
so no case text can close its ``<script>`` element.

Templates live in ``pytest_provenai/report/templates/``. Writes are atomic (a temporary file
beside the target, then a rename), so a failed render leaves no partial page.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from pathlib import Path
from typing import Any

from pytest_provenai._io import atomic_write_text
from pytest_provenai.errors import ProvenaiError
from pytest_provenai.report.results import RunResults

__all__ = ["render_compare", "render_report", "script_json", "write_html"]

TEMPLATES = Path(__file__).parent / "templates"


def _environment() -> Any:
    try:
        import jinja2
    except ImportError:  # pragma: no cover - jinja2 is a dependency
        raise ProvenaiError(
            "the HTML report needs Jinja2: pip install 'pytest-provenai[report]'"
        ) from None
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["num"] = fmt_num
    env.filters["signed"] = fmt_signed
    env.filters["ci"] = fmt_ci
    env.filters["heat"] = heat_colour
    env.filters["short"] = lambda s, n=12: "" if s is None else str(s)[:n]
    env.filters["pct"] = lambda v: "n/a" if v is None else f"{100 * float(v):.1f}%"
    return env


def fmt_num(value: Any, digits: int = 3) -> str:
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return "n/a" if value is None else str(value)
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def fmt_signed(value: Any, digits: int = 3) -> str:
    if value is None or not isinstance(value, (int, float)):
        return "—"
    return f"{value:+.{digits}f}"


def fmt_ci(ci: Any, digits: int = 3, signed: bool = False) -> str:
    if not isinstance(ci, (list, tuple)) or len(ci) != 2 or None in ci:
        return ""
    f = fmt_signed if signed else fmt_num
    return f"[{f(float(ci[0]), digits)}, {f(float(ci[1]), digits)}]"


def heat_colour(value: Any) -> str:
    """Background of a heat-map cell for a rate in [0, 1] (white to deep orange)."""
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return "#f2f2f2"
    v = min(1.0, max(0.0, float(value)))
    r, g, b = (255 + (216 - 255) * v, 255 + (67 - 255) * v, 255 + (21 - 255) * v)
    return f"rgb({r:.0f},{g:.0f},{b:.0f})"


def script_json(data: Any) -> str:
    """``data`` as JSON that is safe inside an HTML ``<script>`` element: ``<``, ``>``, ``&``
    and the JavaScript line separators are written as ``\\uXXXX`` escapes, so no string in
    it can end the element or open a comment."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for ch, esc in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(ch, esc)
    return text


def _csp_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _page(template: str, **context: Any) -> str:
    import markupsafe

    env = _environment()
    css = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    script = context.pop("script", "")
    csp = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src {_csp_hash(script) if script else chr(39) + 'none' + chr(39)}; "
        "base-uri 'none'; form-action 'none'"
    )
    page: str = env.get_template(template).render(
        css=markupsafe.Markup(css), script=markupsafe.Markup(script), csp=csp, **context
    )
    return page


def render_report(results: RunResults) -> str:
    """The report page of ``results`` (see the module docstring)."""
    import markupsafe

    from pytest_provenai.report.view import overview, report_data

    script = (TEMPLATES / "report.js").read_text(encoding="utf-8")
    return _page(
        "report.html.j2",
        o=overview(results),
        data=markupsafe.Markup(script_json(report_data(results))),
        script=script,
    )


def render_compare(comparison: Any) -> str:
    """The comparison page of a :class:`~pytest_provenai.report.compare.Comparison`."""
    return _page("compare.html.j2", c=comparison)


def write_html(path: str | Path, page: str) -> None:
    """Write ``page`` to ``path`` atomically (a temporary file beside it, then a rename)."""
    atomic_write_text(path, page)
