"""``mirage report pollution``: one self-contained HTML page, a Markdown summary and a JSON dump.

The page has no external JS, CSS or fonts; charts are hand-drawn inline SVG (deterministic, no
plotting extra needed, text stays selectable). It never contains memory text, user/agent/run ids
or tenant names: it is rendered from a :class:`PollutionSummary` alone.
An empty window is not an error: the page says "No decisions" explicitly (exit code 0).
"""

from __future__ import annotations

import html
import re
import shlex
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import NamedTuple

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from mirage_guard.adapters._decision_log import DecisionLog, LoggedDecision, sqlite_file
from mirage_guard.adapters._pollution import (
    Granularity,
    GroupFigures,
    PollutionSummary,
    ScoreHistogram,
    TimeBucket,
    summarize,
)
from mirage_guard.adapters._time import as_utc
from mirage_guard.guard import Action, Provenance, markdown_table
from mirage_guard.guard.errors import ConfigError, InputError

PROVENANCE_COLOURS: dict[Provenance, str] = {
    Provenance.STATED: "#009E73",
    Provenance.INFERRED: "#56B4E9",
    Provenance.GENERATED: "#D55E00",
}
ACTION_COLOURS: dict[Action, str] = {
    Action.STORE: "#009E73",
    Action.STORE_AS_HYPOTHESIS: "#0072B2",
    Action.QUARANTINE: "#E69F00",
    Action.BLOCK: "#7a7a7a",
}
ACTION_LABELS: dict[Action, str] = {
    Action.STORE: "store (fact)",
    Action.STORE_AS_HYPOTHESIS: "store as hypothesis",
    Action.QUARANTINE: "quarantine",
    Action.BLOCK: "block",
}
INK = "#1f2328"
MUTED = "#656d76"
GRID = "#d8dee4"


class ReportFiles(NamedTuple):
    html: Path
    markdown: Path
    json: Path


class Regenerate(NamedTuple):
    """The command that produced the report, and one pinned to its window (None if the same)."""

    command: str
    pinned: str | None


# -- formatting -------------------------------------------------------------------------------


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def pct(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f} %"


def _ts(ts: datetime | None) -> str:
    return "–" if ts is None else as_utc(ts).strftime("%Y-%m-%d %H:%M:%S UTC")


def _window(s: PollutionSummary) -> str:
    if s.since is None and s.until is None:
        return "every decision in the log"
    lo = _ts(s.since) if s.since else "the first decision"
    hi = _ts(s.until) if s.until else "the last decision"
    return f"{lo} to {hi}"


def mask_url(url: str) -> str:
    """A database URL with its password hidden (never echoes an unparseable one)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (SQLAlchemyError, ValueError):
        return "<unparseable database URL>"


# -- SVG --------------------------------------------------------------------------------------


def _svg(width: int, height: int, label: str, body: Sequence[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{_e(label)}">'
        f"<title>{_e(label)}</title>{''.join(body)}</svg>"
    )


def _text(
    x: float,
    y: float,
    text: object,
    *,
    anchor: str = "start",
    size: int = 12,
    fill: str = INK,
    weight: str = "normal",
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" '
        f'fill="{fill}" font-weight="{weight}">{_e(text)}</text>'
    )


def _rect(x: float, y: float, w: float, h: float, fill: str, tip: str = "") -> str:
    title = f"<title>{_e(tip)}</title>" if tip else ""
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0):.1f}" height="{h:.1f}" '
        f'fill="{fill}">{title}</rect>'
    )


def _legend(x: float, y: float, items: Sequence[tuple[str, str]]) -> list[str]:
    out: list[str] = []
    for label, colour in items:
        out.append(_rect(x, y - 10, 12, 12, colour))
        out.append(_text(x + 17, y, label))
        x += 30 + 7.2 * len(label)
    return out


def _truncate(label: str, n: int = 26) -> str:
    return label if len(label) <= n else label[: n - 1] + "…"


def model_bars_svg(groups: Sequence[GroupFigures]) -> str:
    """100 % stacked bars per writer model: stated / inferred / generated."""
    left, bar_w, row_h, top = 200, 560, 34, 40
    width, height = left + bar_w + 110, top + row_h * len(groups) + 10
    body = _legend(left, 18, [(p.value, PROVENANCE_COLOURS[p]) for p in Provenance])
    for i, g in enumerate(groups):
        y = top + i * row_h
        body.append(_text(left - 10, y + 17, _truncate(g.label), anchor="end"))
        x = float(left)
        for p, n in (
            (Provenance.STATED, g.stated),
            (Provenance.INFERRED, g.inferred),
            (Provenance.GENERATED, g.generated),
        ):
            w = bar_w * n / g.decisions if g.decisions else 0.0
            tip = f"{g.label}: {p.value} {n} of {g.decisions} ({pct(n / g.decisions)})"
            body.append(_rect(x, y, w, 24, PROVENANCE_COLOURS[p], tip))
            if w >= 44:
                body.append(
                    _text(x + w / 2, y + 17, f"{100 * n / g.decisions:.0f}%", anchor="middle",
                          fill="#ffffff", weight="bold")
                )  # fmt: skip
            x += w
        body.append(_text(left + bar_w + 10, y + 17, f"n = {g.decisions}", fill=MUTED))
    return _svg(width, height, "provenance by writer model", body)


def action_bars_svg(s: PollutionSummary) -> str:
    """Decisions per action (absolute bars, counts and shares written next to them)."""
    left, bar_w, row_h, top = 200, 560, 34, 10
    width, height = left + bar_w + 150, top + row_h * len(Action) + 4
    most = max(s.by_action.values()) or 1
    body: list[str] = []
    for i, a in enumerate(Action):
        y = top + i * row_h
        n = s.by_action[a]
        body.append(_text(left - 10, y + 17, ACTION_LABELS[a], anchor="end"))
        body.append(_rect(left, y, bar_w, 24, "#f3f5f7"))
        body.append(_rect(left, y, bar_w * n / most, 24, ACTION_COLOURS[a], f"{a.value}: {n}"))
        body.append(_text(left + bar_w + 10, y + 17, f"{n}  ({pct(s.action_share[a])})"))
    return _svg(width, height, "decisions by action", body)


def _time_label(ts: datetime, granularity: Granularity) -> str:
    return ts.strftime("%m-%d %H:00" if granularity is Granularity.HOUR else "%Y-%m-%d")


def _polyline(
    points: Sequence[tuple[float, float] | None], colour: str, dash: str, radius: float
) -> list[str]:
    """Line segments through consecutive defined points (gaps stay gaps), and a dot on each."""
    out: list[str] = []
    run: list[tuple[float, float]] = []
    for p in [*points, None]:
        if p is not None:
            run.append(p)
            continue
        if len(run) > 1:
            coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in run)
            out.append(
                f'<polyline points="{coords}" fill="none" stroke="{colour}" '
                f'stroke-width="2.5" stroke-dasharray="{dash}"/>'
            )
        run = []
    out.extend(
        f'<circle cx="{p[0]:.1f}" cy="{p[1]:.1f}" r="{radius}" fill="{colour}" '
        'stroke="#ffffff" stroke-width="1.5"/>'
        for p in points
        if p is not None
    )
    return out


def time_series_svg(buckets: Sequence[TimeBucket], granularity: Granularity) -> str:
    """Generated share (of decisions and of items written) per bucket; volume as grey bars."""
    left, right, top, bottom = 60, 70, 36, 44
    plot_w, plot_h = 760, 220
    width, height = left + plot_w + right, top + plot_h + bottom
    n = len(buckets)
    step = plot_w / max(n, 1)
    most = max((b.decisions for b in buckets), default=0) or 1
    body = _legend(
        left,
        18,
        [("generated, % of decisions", "#D55E00"), ("generated, % of items written", INK)],
    )
    body.append(_rect(left + 440, 8, 12, 12, "#e6e9ed"))
    body.append(_text(left + 457, 18, "decisions (right axis)"))
    for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + plot_h * (1 - frac)
        body.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="{GRID}"/>'
        )
        body.append(_text(left - 8, y + 4, f"{100 * frac:.0f}%", anchor="end", fill=MUTED))
        body.append(_text(left + plot_w + 8, y + 4, f"{most * frac:.0f}", fill=MUTED))
    gen: list[tuple[float, float] | None] = []
    mem: list[tuple[float, float] | None] = []
    label_every = max(1, -(-n // 8))
    for i, b in enumerate(buckets):
        cx = left + step * (i + 0.5)
        h = plot_h * b.decisions / most
        body.append(
            _rect(cx - step * 0.35, top + plot_h - h, step * 0.7, h, "#e6e9ed",
                  f"{_time_label(b.start, granularity)}: {b.decisions} decisions, "
                  f"generated {pct(b.generated_share)}, of written {pct(b.memory_pollution)}")
        )  # fmt: skip
        gen.append(
            None if b.generated_share is None else (cx, top + plot_h * (1 - b.generated_share))
        )
        mem.append(
            None if b.memory_pollution is None else (cx, top + plot_h * (1 - b.memory_pollution))
        )
        if i % label_every == 0:
            label = _time_label(b.start, granularity)
            body.append(_text(cx, top + plot_h + 18, label, anchor="middle", fill=MUTED, size=11))
    body += _polyline(gen, "#D55E00", "none", 6.5)  # bigger, under: coincident dots both show
    body += _polyline(mem, INK, "6 4", 3.5)
    body.append(
        _text(left + plot_w / 2, height - 6, f"UTC, one point per {granularity.value}",
              anchor="middle", fill=MUTED, size=11)
    )  # fmt: skip
    return _svg(width, height, f"generated share per {granularity.value}", body)


def histogram_svg(h: ScoreHistogram) -> str:
    """Scores of one provenance in equal-width bins (counts on the bars)."""
    left, top, plot_w, plot_h, bottom = 36, 58, 240, 150, 40
    width, height = left + plot_w + 16, top + plot_h + bottom
    n = sum(h.counts)
    most = max(h.counts, default=0) or 1
    bins = len(h.counts)
    bw = plot_w / bins
    colour = PROVENANCE_COLOURS[h.provenance]
    mean = "–" if h.mean is None else f"{h.mean:.2f}"
    body = [
        _text(left, 16, h.provenance.value, weight="bold", size=14, fill=colour),
        _text(left, 32, f"n = {n} scored, {h.unscored} unscored, mean {mean}", fill=MUTED, size=11),
        f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" '
        f'stroke="{MUTED}"/>',
    ]
    for i, c in enumerate(h.counts):
        bh = plot_h * c / most
        x = left + i * bw
        tip = f"{h.edges[i]:.1f}–{h.edges[i + 1]:.1f}: {c}"
        body.append(_rect(x + 1, top + plot_h - bh, bw - 2, bh, colour, tip))
        if c:
            body.append(_text(x + bw / 2, top + plot_h - bh - 4, c, anchor="middle", size=10))
    for edge in (0.0, 0.5, 1.0):
        x = left + plot_w * edge
        body.append(_text(x, top + plot_h + 16, f"{edge:.1f}", anchor="middle", fill=MUTED))
    body.append(
        _text(left + plot_w / 2, height - 6, "score = P(over-inference)", anchor="middle",
              fill=MUTED, size=11)
    )  # fmt: skip
    return _svg(width, height, f"score histogram, {h.provenance.value}", body)


# -- HTML -------------------------------------------------------------------------------------

_CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: #1f2328; background: #f6f8fa; margin: 0; line-height: 1.45; }
main { max-width: 1160px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { margin: 0 0 4px; font-size: 28px; }
h2 { margin: 0 0 12px; font-size: 19px; }
.sub { color: #656d76; margin: 0 0 20px; }
section { background: #fff; border: 1px solid #d8dee4; border-radius: 8px; padding: 18px 22px;
  margin: 0 0 18px; }
.cards { display: grid; grid-template-columns: repeat(4, 1fr); gap: 12px; }
.card { border: 1px solid #d8dee4; border-radius: 8px; padding: 12px 14px; background: #fff; }
.card .v { font-size: 26px; font-weight: 700; }
.card .k { color: #656d76; font-size: 13px; }
.card.bad .v { color: #b42318; } .card.good .v { color: #067647; }
.hist { display: flex; gap: 18px; flex-wrap: wrap; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid #eaeef2; }
table.groups { font-size: 13px; }
table.groups th, table.groups td { padding: 6px 6px; }
table.groups td:first-child { white-space: nowrap; }
.scroll { overflow-x: auto; margin-top: 12px; }
th { background: #f6f8fa; font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #067647; font-weight: 700; } .violated { color: #b42318; font-weight: 700; }
li.stale { color: #b42318; font-weight: 700; } li.unknown { color: #656d76; }
pre { background: #1f2328; color: #f6f8fa; padding: 12px 14px; border-radius: 6px;
  overflow-x: auto; font-size: 13px; white-space: pre-wrap; word-break: break-all; }
.empty { font-size: 20px; padding: 28px 22px; }
.note { color: #656d76; font-size: 13px; }
svg { max-width: 100%; height: auto; }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
"""


def _card(value: str, label: str, tone: str = "") -> str:
    return (
        f'<div class="card {tone}"><div class="v">{_e(value)}</div>'
        f'<div class="k">{_e(label)}</div></div>'
    )


def _cards(s: PollutionSummary) -> str:
    facts_ok = s.facts_not_stated_share in (None, 0.0)
    cards = [
        _card(f"{s.decisions:,}", "decisions"),
        _card(pct(s.memory_pollution), "memory pollution: generated share of items written"),
        _card(
            pct(s.facts_not_stated_share),
            "facts not stated (invariant, must be 0)",
            "good" if facts_ok else "bad",
        ),
        _card(pct(s.hypothesis_share), "hypotheses: share of items written"),
        _card(pct(s.generated_share), "generated share of all decisions"),
        _card(f"{s.quarantined:,} / {s.blocked:,}", "quarantined / blocked"),
        _card(pct(s.uncalibrated_share), "uncalibrated decisions"),
        _card(f"{s.tenants:,}", "tenants"),
    ]
    return f'<div class="cards">{"".join(cards)}</div>'


def _table(
    header: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1, cls: str = ""
) -> str:
    def cells(tag: str, row: Sequence[str]) -> str:
        return "".join(
            f'<{tag} class="n">{_e(c)}</{tag}>' if i >= numeric_from else f"<{tag}>{_e(c)}</{tag}>"
            for i, c in enumerate(row)
        )

    head = f"<tr>{cells('th', header)}</tr>"
    body = "".join(f"<tr>{cells('td', r)}</tr>" for r in rows)
    table = f'<table class="{cls}"><thead>{head}</thead><tbody>{body}</tbody></table>'
    return f'<div class="scroll">{table}</div>'


GROUP_HEADER = (
    "decisions",
    "stated",
    "inferred",
    "generated",
    "generated %",
    "written",
    "memory pollution",
    "hypotheses",
    "quarantined",
    "blocked",
    "uncalibrated %",
)


def group_rows(groups: Sequence[GroupFigures]) -> list[list[str]]:
    return [
        [
            g.label,
            str(g.decisions),
            str(g.stated),
            str(g.inferred),
            str(g.generated),
            pct(g.generated_share),
            str(g.written),
            pct(g.memory_pollution),
            str(g.hypotheses),
            str(g.quarantined),
            str(g.blocked),
            pct(g.uncalibrated_share),
        ]
        for g in groups
    ]


def _invariants(s: PollutionSummary) -> str:
    rows = [[c.description, str(c.violations), "OK" if c.ok else "VIOLATED"] for c in s.invariants]
    table = _table(["invariant (holds by construction)", "violations", "status"], rows)
    table = table.replace('<td class="n">OK</td>', '<td class="n ok">OK</td>')
    return table.replace('<td class="n">VIOLATED</td>', '<td class="n violated">VIOLATED</td>')


def _commands(regen: Regenerate) -> str:
    out = (
        "<p>Regenerate this page (and the .md and .json next to it):</p>"
        f"<pre>{_e(regen.command)}</pre>"
    )
    if regen.pinned:
        out += (
            "<p>Reproduce these exact figures later (window pinned to what this run saw):</p>"
            f"<pre>{_e(regen.pinned)}</pre>"
        )
    return out


_DEFINITIONS = """<p class="note"><b>Written</b> = stored as fact, stored as hypothesis or
quarantined (blocked items are not written). <b>Memory pollution</b> = generated / written.
<b>Hypotheses</b> = stored as hypothesis / written. <b>Facts not stated</b> = non-stated items
among stored facts: zero by construction, shown as a check. Scores are calibrated
P(over-inference). Reasons are templates (numbers as #, turn ids as &lt;turn&gt;); the page holds
no memory text, user ids or tenant names.</p>"""


_DRIFT_NOTE = """<p class="note">Per writer model: calibrated P(over-inference) of the decisions
its latest profile version made, window by window, against the distribution that profile was
fitted on (population stability index; stale above the threshold). Unknown is not zero.</p>"""


def _sections(s: PollutionSummary) -> list[str]:
    out = [
        f"<section><h2>Headline</h2>{_cards(s)}</section>",
        f"<section><h2>Invariants</h2>{_invariants(s)}</section>",
        "<section><h2>Provenance by writer model</h2>"
        f"{model_bars_svg(s.by_model)}"
        f"{_table(['writer model', *GROUP_HEADER], group_rows(s.by_model), cls='groups')}"
        "</section>",
        f"<section><h2>Actions</h2>{action_bars_svg(s)}</section>",
        f"<section><h2>Generated share per {s.granularity.value}</h2>"
        f"{time_series_svg(s.time_series, s.granularity)}</section>",
        '<section><h2>Score distribution by provenance</h2><div class="hist">'
        + "".join(histogram_svg(h) for h in s.score_histograms)
        + "</div></section>",
    ]
    if s.by_tenant:
        out.append(
            f"<section><h2>Per tenant ({s.tenants} tenants, opaque labels)</h2>"
            f"{_table(['tenant', *GROUP_HEADER], group_rows(s.by_tenant), cls='groups')}</section>"
        )
    if s.profile_drift:
        items = "".join(
            f'<li class="{d.status.value}">{_e(d.sentence())}</li>' for d in s.profile_drift
        )
        out.append(f"<section><h2>Calibration drift</h2><ul>{items}</ul>{_DRIFT_NOTE}</section>")
    reasons = [[r.code.value, r.reason, str(r.decisions), pct(r.share)] for r in s.top_reasons]
    out.append(
        "<section><h2>Top reasons</h2>"
        f"{_table(['code', 'reason', 'decisions', 'share of decisions'], reasons)}</section>"
    )
    return out


def render_html(s: PollutionSummary, regen: Regenerate, source: str) -> str:
    head = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>mirage-guard memory pollution</title><style>{_CSS}</style></head><body><main>"
        "<h1>Memory pollution report</h1>"
        f'<p class="sub">Window: {_e(_window(s))} · decisions seen: {_e(_ts(s.first_decision_at))}'
        f" to {_e(_ts(s.last_decision_at))} · source: <code>{_e(source)}</code></p>"
    )
    if s.is_empty:
        body = [
            '<section class="empty"><b>No decisions in this window.</b> The decision log has '
            "nothing between these bounds, so there is nothing to chart.</section>"
        ]
    else:
        body = _sections(s)
    tail = f"<section><h2>How to regenerate</h2>{_commands(regen)}{_DEFINITIONS}</section>"
    return head + "".join(body) + tail + "</main></body></html>\n"


# -- Markdown ---------------------------------------------------------------------------------


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [*markdown_table(header, rows), ""]


def render_markdown(s: PollutionSummary, regen: Regenerate, source: str) -> str:
    lines = [
        "# Memory pollution report",
        "",
        f"Window: {_window(s)}. Source: `{source}`.",
        "",
    ]
    if s.is_empty:
        lines += ["**No decisions in this window.**", ""]
    else:
        lines += _md_table(
            ["figure", "value"],
            [
                ["decisions", str(s.decisions)],
                ["memory pollution (generated / written)", pct(s.memory_pollution)],
                ["facts not stated (invariant, must be 0)", pct(s.facts_not_stated_share)],
                ["hypotheses / written", pct(s.hypothesis_share)],
                ["generated / decisions", pct(s.generated_share)],
                ["quarantined / blocked", f"{s.quarantined} / {s.blocked}"],
                ["uncalibrated decisions", pct(s.uncalibrated_share)],
                ["tenants", str(s.tenants)],
            ],
        )
        lines += _md_table(
            ["invariant", "violations"], [[c.description, str(c.violations)] for c in s.invariants]
        )
        lines += ["## By writer model", ""]
        lines += _md_table(["writer model", *GROUP_HEADER], group_rows(s.by_model))
        if s.by_tenant:
            lines += ["## By tenant (opaque labels)", ""]
            lines += _md_table(["tenant", *GROUP_HEADER], group_rows(s.by_tenant))
        if s.profile_drift:
            lines += ["## Calibration drift", ""]
            lines += [f"- {d.sentence()}" for d in s.profile_drift] + [""]
        lines += ["## Top reasons", ""]
        lines += _md_table(
            ["code", "reason", "decisions", "share"],
            [[r.code.value, r.reason, str(r.decisions), pct(r.share)] for r in s.top_reasons],
        )
    lines += ["## How to regenerate", "", "```", regen.command, "```", ""]
    if regen.pinned:
        lines += ["Pinned to this window:", "", "```", regen.pinned, "```", ""]
    return "\n".join(lines)


_HTML_SUFFIXES = frozenset({".html", ".htm"})
_REPORT_SUFFIXES = _HTML_SUFFIXES | {".md", ".json"}


def report_files(out: Path) -> ReportFiles:
    """The three files ``--out`` names: ``out`` itself when it ends in .html or .htm, else
    ``out`` with a .md or .json suffix replaced (or any other name kept whole) plus .html; the
    .md and .json beside it. The three always differ: r.md gives r.html, r.md and r.json."""
    stem = out.with_suffix("") if out.suffix.lower() in _REPORT_SUFFIXES else out

    def beside(suffix: str) -> Path:
        return stem.with_name(stem.name + suffix)

    html_file = out if out.suffix.lower() in _HTML_SUFFIXES else beside(".html")
    return ReportFiles(html_file, beside(".md"), beside(".json"))


def check_report_out(out: Path) -> ReportFiles:
    """The files ``out`` names, refused before anything is read when one of them is a
    directory."""
    files = report_files(out)
    for path in (out, *files):
        if path.is_dir():
            raise InputError(f"{path} is a directory: --out takes a file name")
    return files


def write_report(s: PollutionSummary, out: Path, regen: Regenerate, source: str) -> ReportFiles:
    """Write the HTML page, the Markdown and the JSON :func:`report_files` names; an
    :class:`InputError` naming the file for one that cannot be written."""
    files = check_report_out(out)
    texts = (
        render_html(s, regen, source),
        render_markdown(s, regen, source),
        s.model_dump_json(indent=2) + "\n",
    )
    for path, text in zip(files, texts, strict=True):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write the report to {path}: {exc.strerror or exc}") from exc
    return files


# -- reading the log --------------------------------------------------------------------------

_SPAN = re.compile(r"^(\d+)\s*([hdw])$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


def parse_when(text: str, now: datetime, *, end_of_day: bool = False) -> datetime:
    """An ISO date/time (UTC when it has no offset) or a span back from ``now`` (24h, 7d, 2w).

    A bare date means its first instant, or its last one with ``end_of_day`` (for --until).
    """
    t = text.strip()
    span = _SPAN.match(t)
    if span:
        return as_utc(now) - int(span.group(1)) * _UNITS[span.group(2)]
    try:
        if _DATE.match(t):
            day = date.fromisoformat(t)
            return datetime.combine(day, time.max if end_of_day else time.min, tzinfo=UTC)
        return as_utc(datetime.fromisoformat(t))
    except ValueError as exc:
        raise InputError(f"{text!r} is not an ISO date/time or a span like 24h, 7d, 2w") from exc


def open_decision_log(
    url: str, *, where_set: str = "--database-url, MIRAGE_DATABASE_URL or MIRAGE_DATA_DIR"
) -> DecisionLog:
    """The decision log at ``url`` for reading; a missing SQLite file is an error (opening it
    would create an empty one). ``where_set``: how the error says to point at another log."""
    parsed = make_url(url)
    db = sqlite_file(parsed) if parsed.get_backend_name() == "sqlite" else None
    if db is not None and not db.exists():
        folder = db.parent
        why = f" ({folder} is not a directory)" if folder.exists() and not folder.is_dir() else ""
        raise ConfigError(f"no decision log at {db}{why}: set {where_set}")
    return DecisionLog(url, creates_audit_table=False)


def load_decisions(
    url: str, since: datetime | None = None, until: datetime | None = None
) -> list[LoggedDecision]:
    """All tenants' decisions in [since, until]; a missing SQLite file is an error."""
    log = open_decision_log(url)
    try:
        return log.all_decisions(since=since, until=until)
    finally:
        log.close()


def regenerate_commands(
    *,
    database_url: str | None,
    out: Path,
    since_arg: str | None,
    until_arg: str | None,
    since: datetime | None,
    until: datetime | None,
    last_decision_at: datetime | None,
) -> Regenerate:
    def build(lo: str | None, hi: str | None) -> str:
        parts = ["mirage", "report", "pollution"]
        if database_url:
            parts += ["--database-url", mask_url(database_url)]
        parts += ["--out", str(out)]
        if lo:
            parts += ["--since", lo]
        if hi:
            parts += ["--until", hi]
        return shlex.join(parts)

    command = build(since_arg, until_arg)
    pinned_until = until or last_decision_at
    pinned = build(
        since.isoformat() if since else None, pinned_until.isoformat() if pinned_until else None
    )
    return Regenerate(command, None if pinned == command else pinned)


__all__ = [
    "Regenerate",
    "ReportFiles",
    "check_report_out",
    "load_decisions",
    "mask_url",
    "open_decision_log",
    "parse_when",
    "regenerate_commands",
    "render_html",
    "render_markdown",
    "report_files",
    "summarize",
    "write_report",
]
