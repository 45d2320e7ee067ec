"""``mirage bench collapse report RUN_DIR``: Markdown, one self-contained HTML page with the
persona-share chart, and a CSV of every (model, condition, memory) cell — MirageBench's style."""

from __future__ import annotations

import base64
import csv
import html
import io
import math
import shlex
from pathlib import Path

from mirage_guard.benchmark._report import ReportFiles, _fmt, _md_table, _pyplot
from mirage_guard.benchmark.collapse._analysis import CollapseAnalysis, analyse
from mirage_guard.benchmark.collapse._config import Condition, MemoryArm
from mirage_guard.benchmark.collapse._mapping import PersonaThresholds
from mirage_guard.benchmark.collapse._situations import PERSONAS, AdviserPersona

COLOURS: dict[AdviserPersona, str] = {
    AdviserPersona.HEALER: "#009e73",
    AdviserPersona.STOIC: "#0072b2",
    AdviserPersona.TECHNICIAN: "#999999",
    AdviserPersona.ENABLER: "#e69f00",
    AdviserPersona.DOOMER: "#d55e00",
}

# The study's published figures (arXiv 2607.08326, as stated in issue 12).
PAPER_HUMAN_N_EFF = 3.80
PAPER_MODELS: tuple[tuple[str, tuple[str, ...], float, float], ...] = (
    ("GPT-5.1", ("gpt-5.1", "gpt-5-1"), 99.8, 1.02),
    ("Claude Opus 4.5", ("claude-opus-4-5", "claude-opus-4.5"), 94.8, 1.29),
)

Section = tuple[str, str, list[str], list[list[str]]]


def _pct(x: float) -> str:
    return _fmt(100 * x if math.isfinite(x) else math.nan, 1)


def _finding(holds: bool, *figures: float) -> str:
    """yes / no for a finding drawn from ``figures``, or – (no data) when one is missing: a
    comparison with a missing figure (NaN) is False, which is not a "no"."""
    if not all(math.isfinite(x) for x in figures):
        return "– (no data)"
    return "yes" if holds else "no"


def _ci(value: float, low: float, high: float, digits: int = 2) -> str:
    if not math.isfinite(value):
        return "–"
    if not (math.isfinite(low) and math.isfinite(high)):
        return _fmt(value, digits)
    return f"{_fmt(value, digits)} [{_fmt(low, digits)}, {_fmt(high, digits)}]"


# -- plot --------------------------------------------------------------------------------------


def render_chart(a: CollapseAnalysis) -> bytes:
    """Persona shares, one stacked bar per model x condition (x memory), plus the reference."""
    plt = _pyplot()
    names = [c.arm.name for c in a.cells] + [
        "reference (authored estimate)",
        "skilled-adviser stances (authored)",
    ]
    rows = [c.shares for c in a.cells] + [a.reference_pooled, a.authored_stances]
    fig = plt.figure(figsize=(9, 1.2 + 0.42 * len(names)), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    left = [0.0] * len(names)
    for i, persona in enumerate(PERSONAS):
        widths = [100 * (r[i] if math.isfinite(r[i]) else 0.0) for r in rows]
        ax.barh(names, widths, left=left, color=COLOURS[persona], label=persona.value)
        left = [x + w for x, w in zip(left, widths, strict=True)]
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of answers, %")
    ax.set_title("Persona shares per model and condition")
    ax.invert_yaxis()
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=5, fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


# -- tables ------------------------------------------------------------------------------------

CELL_COLUMNS = (
    "model",
    "condition",
    "memory",
    "answers",
    "failed",
    *(f"{p.value.lower()}_pct" for p in PERSONAS),
    "n_eff",
    "n_eff_low",
    "n_eff_high",
    "js",
    "js_low",
    "js_high",
    "stance_agreement_pct",
    "stoic_as_doomer_pct",
)


def cell_rows(a: CollapseAnalysis) -> list[list[str]]:
    return [
        [
            c.arm.model,
            c.arm.condition.value,
            c.arm.memory.value,
            str(c.n),
            str(c.failed),
            *(_pct(s) for s in c.shares),
            _fmt(c.n_eff.value, 3),
            _fmt(c.n_eff.low, 3),
            _fmt(c.n_eff.high, 3),
            _fmt(c.js.value, 4),
            _fmt(c.js.low, 4),
            _fmt(c.js.high, 4),
            _pct(c.agreement),
            _pct(c.confusion.stoic_as_doomer),
        ]
        for c in a.cells
    ]


def _overall(a: CollapseAnalysis) -> Section:
    header = ["model · condition", "n", *(f"{p.value} %" for p in PERSONAS)]
    header += ["N_eff [95% CI]", "JS to reference [95% CI]", "takes the skilled stance %"]
    rows = [
        [
            c.arm.name,
            f"{c.n}" + (f" (+{c.failed} failed)" if c.failed else ""),
            *(_pct(s) for s in c.shares),
            _ci(*c.n_eff),
            _ci(*c.js, digits=3),
            _pct(c.agreement),
        ]
        for c in a.cells
    ]
    rows.append(
        [
            "reference (authored estimate, context mixture)",
            "–",
            *(_pct(s) for s in a.reference_pooled),
            _fmt(a.reference_n_eff_pooled, 2),
            "0",
            "–",
        ]
    )
    rows.append(
        [
            "skilled-adviser stances of the situations (authored)",
            "–",
            *(_pct(s) for s in a.authored_stances),
            _fmt(a.authored_n_eff, 2),
            "–",
            "100",
        ]
    )
    note = (
        "N_eff = exp(Shannon entropy, nats) of the persona distribution (1 = every answer one "
        "persona, 5 = uniform). JS = Jensen–Shannon divergence (bits, 0..1) to the reference "
        "mixed over the contexts answered. CIs: percentile bootstrap over answers. Personas "
        f"from the judge's (H, E): Technician iff |H| <= {a.thresholds.h_band} and |E| <= "
        f"{a.thresholds.e_band}, otherwise the quadrant (0 counts as positive)."
    )
    return "Persona distribution, N_eff and JS", note, header, rows


def _per_context(a: CollapseAnalysis) -> Section:
    header = [
        "model · condition",
        "context",
        "n",
        "Healer %",
        "Stoic %",
        "N_eff",
        "ref N_eff",
        "JS",
    ]
    rows = [
        [
            r.arm.name,
            r.context,
            str(r.n),
            _pct(r.shares[0]),
            _pct(r.shares[1]),
            _fmt(r.n_eff, 2),
            _fmt(r.reference_n_eff, 2),
            _fmt(r.js, 3),
        ]
        for r in a.contexts
    ]
    note = (
        "Per context: ~10 situations each, so these figures are coarse; ref N_eff is the "
        "N_eff of the context's reference distribution (authored estimate)."
    )
    return "Per context", note, header, rows


def _confusion(a: CollapseAnalysis) -> list[Section]:
    sections: list[Section] = []
    header = ["reference stance \\ answer", *(p.value for p in PERSONAS)]
    summary = [
        [
            c.arm.name,
            _pct(c.confusion.stoic_as_doomer),
            _pct(c.confusion.doomer_of_challenging),
            _pct(c.confusion.healer_of_stoic),
        ]
        for c in a.cells
    ]
    sections.append(
        (
            "Stoic ↔ Doomer",
            "Among situations whose skilled stance is Stoic: the share answered as Doomer, "
            "Doomer among the challenging (Stoic + Doomer) answers, and the share answered "
            "as Healer (collapse toward support).",
            ["model · condition", "Stoic → Doomer %", "Doomer / challenging %", "Stoic → Healer %"],
            summary,
        )
    )
    for c in a.cells:
        rows = [
            [p.value, *(str(x) for x in row)]
            for p, row in zip(PERSONAS, c.confusion.matrix, strict=True)
            if sum(row)
        ]
        sections.append(
            (
                f"Confusion: {c.arm.name}",
                "Rows: the situation's skilled-adviser stance (authored); columns: the persona "
                "of the answer (judge). No situation carries Enabler or Doomer as its stance.",
                header,
                rows,
            )
        )
    return sections


def _memory(a: CollapseAnalysis) -> Section | None:
    if not a.memory:
        return None
    header = [
        "model · condition",
        "memory",
        "n",
        "Healer %",
        "N_eff [95% CI]",
        "JS to reference [95% CI]",
        "changed vs no memory %",
        "JS vs no memory",
        "over-inferred share of stored facts %",
        "over-inferred candidates kept out %",
    ]
    rows = [
        [
            f"{r.model} · {r.condition.value}",
            r.memory.value,
            str(r.n),
            _pct(r.healer),
            _ci(*r.n_eff),
            _ci(*r.js, digits=3),
            _pct(r.changed_vs_none),
            _fmt(r.js_vs_none, 3),
            _pct(r.pollution),
            _pct(r.dropped),
        ]
        for r in a.memory
    ]
    note = (
        "The same situations asked with a user memory built from a MirageBench persona: clean "
        "(the 3 revealed facts), polluted (plus over-inferred claims about that user stored as "
        "facts) and guarded (the same candidates stored as the guard decides); resample = no "
        "memory, asked again with the next seed: its 'changed' is the noise floor a memory "
        "arm's shift must clear. 'changed' = share of situations whose answer persona differs "
        "from the no-memory answer. Memories use the packaged claims of the personas of split "
        f"{a.manifest.config.memory_split or 'all'!r}; the shipped evidence profile was fitted on "
        "the train split, so only dev personas test the guard on unseen claims."
    )
    return "Does polluted memory shift the stance? (linking the two studies)", note, header, rows


def _paper(a: CollapseAnalysis) -> Section:
    if a.offline:
        comparable = "not comparable: mock models (no measurement)"
    else:
        comparable = "indicative only: 140 authored situations, our prompts and judge"
    instruct = {
        c.arm.model: c
        for c in a.cells
        if c.arm.condition is Condition.INSTRUCT and c.arm.memory is MemoryArm.NONE
    }
    plan = {
        c.arm.model: c
        for c in a.cells
        if c.arm.condition is Condition.PLAN_FIRST and c.arm.memory is MemoryArm.NONE
    }
    rows = [
        [
            "human N_eff",
            _fmt(PAPER_HUMAN_N_EFF, 2),
            f"reference (authored estimate): mean per context {_fmt(a.reference_n_eff_mean, 2)},"
            f" pooled {_fmt(a.reference_n_eff_pooled, 2)}",
            "not comparable: our reference is an estimate, not human answers",
        ]
    ]
    for label, keys, healer, n_eff in PAPER_MODELS:
        match = next((c for m, c in instruct.items() if any(k in m.lower() for k in keys)), None)
        run = (
            f"{match.arm.model}: Healer {_pct(match.shares[0])} %, N_eff "
            f"{_fmt(match.n_eff.value, 2)}"
            if match
            else "not in this run"
        )
        rows.append([f"{label} (Instruct)", f"Healer {healer} %, N_eff {n_eff}", run, comparable])
    for model, cell in instruct.items():
        if model in plan:
            before, after = cell.n_eff.value, plan[model].n_eff.value
            rows.append(
                [
                    f"Plan-First lowers N_eff ({model})",
                    "yes",
                    f"{_finding(after < before, before, after)}: {_fmt(before, 2)} → "
                    f"{_fmt(after, 2)}",
                    comparable,
                ]
            )
    rows.append(
        [
            "SFT restores N_eff ≈ 4.0, JS −50–60 %",
            "yes",
            "not run (no fine-tuning here)",
            "–",
        ]
    )
    return (
        "Paper vs this run",
        "Published figures from 'Diagnosing and Repairing Persona Collapse in LLM Advice' "
        "(arXiv 2607.08326) as stated in issue 12, next to this run's.",
        ["figure", "paper", "this run", "comparability"],
        rows,
    )


def sections(a: CollapseAnalysis) -> list[Section]:
    out = [_paper(a), _overall(a)]
    memory = _memory(a)
    if memory:
        out.append(memory)
    out += _confusion(a)
    out.append(_per_context(a))
    acc = a.accounting
    unknown = f" (+{acc.cost_unknown_calls} of unknown price)" if acc.cost_unknown_calls else ""
    out.append(
        (
            "Accounting",
            "Calls, tokens and cost of this run's records (cache hits cost nothing).",
            ["calls", "cache hits", "tokens in", "tokens out", "cost USD"],
            [
                [
                    str(acc.calls),
                    str(acc.cached_calls),
                    f"{acc.prompt_tokens:,}",
                    f"{acc.completion_tokens:,}",
                    f"{acc.cost_text()}{unknown}",
                ]
            ],
        )
    )
    return out


def banner(a: CollapseAnalysis) -> str | None:
    if not a.offline:
        return None
    return (
        f"Models answered by the offline mock provider ({', '.join(a.manifest.offline_models)}): "
        "these figures exercise the pipeline and are not measurements of any model."
    )


def _header_lines(a: CollapseAnalysis, run_dir: Path) -> list[str]:
    cfg = a.manifest.config
    return [
        f"Subjects: {', '.join(cfg.models)} · judge: {cfg.judge} · conditions: "
        f"{', '.join(c.value for c in cfg.conditions)} · memory: "
        f"{', '.join(m.value for m in cfg.memory)} (under {cfg.memory_condition.value}) · "
        f"seed {cfg.seed} · started {a.manifest.started_at}",
        f"Persona thresholds: h_band {a.thresholds.h_band}, e_band {a.thresholds.e_band}"
        + (" (overridden at report time)" if a.thresholds != cfg.mapping else " (as run)"),
        f"Run command: `{shlex.join(a.manifest.command) or 'mirage bench collapse run ...'}`",
        f"Regenerate this report: `mirage bench collapse report {run_dir}`",
    ]


def render_markdown(a: CollapseAnalysis, run_dir: Path, chart: str) -> str:
    out = [f"# Persona-collapse report: {run_dir.name}", ""]
    note = banner(a)
    if note:
        out += [f"> **{note}**", ""]
    out += [line + "  " for line in _header_lines(a, run_dir)] + [""]
    out += [f"![Persona shares per model and condition]({chart})", ""]
    for title, text, header, rows in sections(a):
        out += [f"## {title}", "", f"_{text}_", "", _md_table(header, rows), ""]
    out += ["## Prompts", ""]
    out += [f"- `{n}@{v}`" for n, v in sorted(a.manifest.prompts.items())]
    return "\n".join(out) + "\n"


def render_html(a: CollapseAnalysis, run_dir: Path, chart: bytes) -> str:
    e = html.escape
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>Persona-collapse report: {e(run_dir.name)}</title>",
        "<style>body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;"
        "padding:0 1em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em;"
        "font-size:13px}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}"
        "td:first-child,th:first-child{text-align:left}th{background:#f3f3f3}"
        ".banner{background:#fff3cd;border:1px solid #e0c060;padding:.7em 1em}"
        "img{max-width:100%;border:1px solid #eee;margin:.5em 0}code{background:#f5f5f5}"
        ".note{color:#666;font-size:13px}</style></head><body>",
        f"<h1>Persona-collapse report: {e(run_dir.name)}</h1>",
    ]
    note = banner(a)
    if note:
        parts.append(f"<p class='banner'><strong>{e(note)}</strong></p>")
    parts.append("<p>" + "<br>".join(e(line) for line in _header_lines(a, run_dir)) + "</p>")
    data = base64.b64encode(chart).decode("ascii")
    parts.append(f"<img alt='persona shares' src='data:image/png;base64,{data}'>")
    for title, text, header, rows in sections(a):
        parts.append(f"<h2>{e(title)}</h2><p class='note'>{e(text)}</p>")
        parts.append("<div style='overflow-x:auto'><table><tr>")
        parts.append("".join(f"<th>{e(h)}</th>" for h in header) + "</tr>")
        for row in rows:
            parts.append("<tr>" + "".join(f"<td>{e(cell)}</td>" for cell in row) + "</tr>")
        parts.append("</table></div>")
    parts.append("<h2>Prompts</h2><ul>")
    parts += [f"<li><code>{e(n)}@{e(v)}</code></li>" for n, v in sorted(a.manifest.prompts.items())]
    parts.append("</ul></body></html>")
    return "\n".join(parts)


def write_collapse_report(
    run_dir: str | Path,
    out_dir: str | Path | None = None,
    *,
    thresholds: PersonaThresholds | None = None,
    resamples: int = 2000,
) -> ReportFiles:
    run_path = Path(run_dir)
    analysis = analyse(run_path, thresholds=thresholds, resamples=resamples)
    target = Path(out_dir) if out_dir else run_path / "report"
    (target / "plots").mkdir(parents=True, exist_ok=True)
    chart = render_chart(analysis)
    chart_path = target / "plots" / "persona_shares.png"
    chart_path.write_bytes(chart)
    md = target / "report.md"
    md.write_text(render_markdown(analysis, run_path, "plots/persona_shares.png"), encoding="utf-8")
    page = target / "report.html"
    page.write_text(render_html(analysis, run_path, chart), encoding="utf-8")
    table = target / "cells.csv"
    with table.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CELL_COLUMNS)
        writer.writerows(cell_rows(analysis))
    return ReportFiles(markdown=md, html=page, leaderboard=table, plots=[chart_path])
