"""``mirage bench report RUN_DIR``: Markdown, one self-contained HTML page, a leaderboard CSV."""

from __future__ import annotations

import base64
import csv
import html
import io
import math
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from mirage_guard.benchmark._analysis import RunAnalysis, analyse
from mirage_guard.benchmark._matching import SemanticMatcher
from mirage_guard.benchmark._report_fidelity import fidelity_sections
from mirage_guard.benchmark._schemas import Accuracy
from mirage_guard.guard import markdown_table
from mirage_guard.guard.errors import MissingExtraError

if TYPE_CHECKING:
    from matplotlib.figure import Figure


class ReportFiles(NamedTuple):
    markdown: Path
    html: Path
    leaderboard: Path
    plots: list[Path]
    skipped_lines: tuple[str, ...] = ()
    """Records lines left out of the figures, with why (``records/KIND.jsonl:LINE: WHY``)."""


def _fmt(x: float, digits: int = 1) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise MissingExtraError("matplotlib", "bench") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# -- plots -------------------------------------------------------------------------------------


def _stacked(ax: Any, names: list[str], s: list[float], f: list[float], title: str) -> None:
    ax.barh(names, s, color="#e69f00", label="stereotype")
    ax.barh(names, f, left=s, color="#d55e00", label="fabricated")
    for i, (a, b) in enumerate(zip(s, f, strict=True)):
        ax.text(a + b + 0.5, i, _fmt(a + b), va="center", fontsize=8)
    ax.set_xlabel("over-inference, % of claims")
    ax.set_title(title)
    ax.invert_yaxis()
    ax.legend(loc="lower right", fontsize=8)


def _plot_models(a: RunAnalysis, fig: Figure) -> None:
    rows = sorted(a.models, key=lambda r: -r.judge.oi if math.isfinite(r.judge.oi) else 0)
    _stacked(
        fig.subplots(),
        [r.model for r in rows],
        [r.judge.stereotype for r in rows],
        [r.judge.fabricated for r in rows],
        "OI by model (judge), split S / F",
    )


def _plot_tasks(a: RunAnalysis, fig: Figure) -> None:
    names = list(a.by_task)
    _stacked(
        fig.subplots(),
        names,
        [a.by_task[t].stereotype for t in names],
        [a.by_task[t].fabricated for t in names],
        "OI by task (all models)",
    )


def _plot_groups(a: RunAnalysis, fig: Figure) -> None:
    names = list(a.by_group)
    _stacked(
        fig.subplots(),
        names,
        [a.by_group[g].stereotype for g in names],
        [a.by_group[g].fabricated for g in names],
        f"OI by persona group (Δ stereotypical − counter = {_fmt(a.group_delta)} pts)",
    )


def _plot_self_vs_judge(a: RunAnalysis, fig: Figure) -> None:
    ax = fig.subplots()
    for r in a.models:
        ax.scatter(r.self_oi, r.judge_oi_same_units, color="#0072b2")
        ax.annotate(
            r.model,
            (r.self_oi, r.judge_oi_same_units),
            fontsize=7,
            xytext=(3, 3),
            textcoords="offset points",
        )
    c = a.self_vs_judge
    ax.set_title(
        f"Self-audit vs judge OI (Spearman ρ = {_fmt(c.coefficient, 2)}, "
        f"p = {_fmt(c.p_value, 3)}, n = {c.n})"
    )
    ax.set_xlabel("OI by the model's own self-audit, %")
    ax.set_ylabel("OI by the judge, %")


def _plot_accum(a: RunAnalysis, fig: Figure) -> None:
    ax = fig.subplots()
    for row in a.accum:
        style = "-" if row.policy == "retain" else "--"
        label = f"{row.model} · {row.policy}{' · guard' if row.guarded else ''}"
        ax.plot(
            range(1, len(row.sizes) + 1),
            row.sizes,
            style,
            marker="o" if row.guarded else None,
            label=label,
        )
    ax.set_xlabel("round")
    ax.set_ylabel("memory entries |M_r| (stored)")
    ax.set_title("Accumulation: memory size per round (solid retain-biased, dashed free-pruning)")
    if a.accum:
        ax.legend(fontsize=7)


def _plot_guard(a: RunAnalysis, fig: Figure) -> None:
    axes = fig.subplots(1, 2)
    labels = [f"{g.model}\n{g.path}" for g in a.guard]
    x = list(range(len(labels)))
    for ax, (title, without, with_) in zip(
        axes,
        [
            (
                "memory pollution, % of stored facts judged OI",
                [g.pollution_without for g in a.guard],
                [g.pollution_with for g in a.guard],
            ),
            (
                "grounded retention, %",
                [g.grounded_retention_without for g in a.guard],
                [g.grounded_retention_with for g in a.guard],
            ),
        ],
        strict=True,
    ):
        ax.bar([i - 0.2 for i in x], without, width=0.4, color="#999999", label="without guard")
        ax.bar([i + 0.2 for i in x], with_, width=0.4, color="#009e73", label="with guard")
        ax.set_xticks(x, labels, fontsize=6, rotation=30, ha="right")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)


PLOTS: tuple[tuple[str, str, Callable[[RunAnalysis, Any], None]], ...] = (
    ("oi_by_model", "OI by model", _plot_models),
    ("oi_by_task", "OI by task", _plot_tasks),
    ("oi_by_group", "OI by persona group", _plot_groups),
    ("self_vs_judge", "Self-audit vs judge", _plot_self_vs_judge),
    ("accumulation", "Accumulation curves", _plot_accum),
    ("guard", "With vs without the guard", _plot_guard),
)


def render_plots(a: RunAnalysis) -> dict[str, bytes]:
    plt = _pyplot()
    images: dict[str, bytes] = {}
    for name, _, draw in PLOTS:
        fig = plt.figure(figsize=(9, 4.5 if name != "guard" else 4.0), dpi=100)
        draw(a, fig)
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        plt.close(fig)
        images[name] = buffer.getvalue()
    return images


# -- tables ------------------------------------------------------------------------------------

LEADERBOARD_COLUMNS = (
    "rank",
    "model",
    "family",
    "claims",
    "oi_pct",
    "grounded_pct",
    "reasonable_pct",
    "stereotype_pct",
    "fabricated_pct",
    "self_oi_pct",
    "self_monitoring_gap_pts",
    "within_model_auroc",
    "probe_error_pct",
    "probe_task_gap_pts",
    "mean_output_words",
    "group_delta_pts",
    "failed_units",
)


def leaderboard_rows(a: RunAnalysis) -> list[list[str]]:
    """Lower OI ranks higher (over-inference is what the benchmark penalises)."""
    ordered = sorted(a.models, key=lambda r: r.judge.oi if math.isfinite(r.judge.oi) else 1e9)
    return [
        [
            str(i),
            r.model,
            r.family,
            str(r.judge.n),
            _fmt(r.judge.oi, 2),
            _fmt(r.judge.grounded, 2),
            _fmt(r.judge.reasonable, 2),
            _fmt(r.judge.stereotype, 2),
            _fmt(r.judge.fabricated, 2),
            _fmt(r.self_oi, 2),
            _fmt(r.gap, 2),
            _fmt(r.within_auroc, 3),
            _fmt(r.probe_error, 2),
            _fmt(r.probe_task_gap, 2),
            _fmt(r.mean_output_words, 1),
            _fmt(r.group_delta, 2),
            str(r.failed_units),
        ]
        for i, r in enumerate(ordered, start=1)
    ]


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    return "\n".join(markdown_table(header, rows))


def _sections(a: RunAnalysis, run_dir: Path) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """(title, note, header, rows) of every table the report shows."""
    c = a.self_vs_judge
    sections = [
        (
            "Leaderboard",
            "lower OI is better; OI = stereotype + fabricated claims (judge)",
            list(LEADERBOARD_COLUMNS),
            leaderboard_rows(a),
        ),
        (
            "Headline",
            f"regenerate: mirage bench report {run_dir}",
            ["figure", "value"],
            [
                ["OI macro (mean of models), %", _fmt(a.oi_macro, 2)],
                ["OI micro (claim-weighted), %", _fmt(a.oi_micro, 2)],
                ["Δ OI stereotypical − counter, points", _fmt(a.group_delta, 2)],
                [
                    "Spearman ρ self vs judge (p)",
                    f"{_fmt(c.coefficient, 3)} ({_fmt(c.p_value, 3)})",
                ],
                ["ρ bootstrap 95 % CI", f"[{_fmt(c.ci[0], 2)}, {_fmt(c.ci[1], 2)}]"],
                [
                    "ρ family-clustered 95 % CI",
                    f"[{_fmt(c.ci_family[0], 2)}, {_fmt(c.ci_family[1], 2)}]",
                ],
                [
                    "output length vs self-audit OI, Pearson r over outputs (n)",
                    f"{_fmt(a.length_vs_self_oi.coefficient, 3)} ({a.length_vs_self_oi.n})",
                ],
                [
                    "output length vs judge OI, Pearson r over outputs (n)",
                    f"{_fmt(a.length_vs_oi.coefficient, 3)} ({a.length_vs_oi.n})",
                ],
                [
                    "output length vs OI, Pearson r over models (n)",
                    f"{_fmt(a.length_vs_oi_models.coefficient, 3)} ({a.length_vs_oi_models.n})",
                ],
            ],
        ),
        (
            "OI by task",
            "all models pooled, %",
            ["task", "claims", "grounded", "reasonable", "stereotype", "fabricated", "OI"],
            [
                [
                    t,
                    str(s.n),
                    _fmt(s.grounded),
                    _fmt(s.reasonable),
                    _fmt(s.stereotype),
                    _fmt(s.fabricated),
                    _fmt(s.oi),
                ]
                for t, s in a.by_task.items()
            ],
        ),
        (
            "OI by model and task",
            "% of each model's claims on that task",
            ["model", *a.by_task],
            [[model, *[_fmt(v) for v in row.values()]] for model, row in a.by_model_task.items()],
        ),
        (
            "Persona groups per model",
            "OI %, and Δ = stereotypical − counter in points",
            ["model", "stereotypical", "counter", "neutral", "Δ"],
            [
                [
                    r.model,
                    *[_fmt(r.by_group[g].oi) for g in ("stereotypical", "counter", "neutral")],
                    _fmt(r.group_delta),
                ]
                for r in a.models
            ],
        ),
        (
            "OI by persona group",
            "all models pooled, %",
            ["group", "claims", "stereotype", "fabricated", "OI"],
            [
                [g, str(s.n), _fmt(s.stereotype), _fmt(s.fabricated), _fmt(s.oi)]
                for g, s in a.by_group.items()
            ],
        ),
        (
            "Accuracy against the ground-truth profile",
            "the judge's separate label vs P (P is never evidence), % of claims",
            ["model", *[label.value for label in Accuracy], "OI claims that P contradicts"],
            [
                [
                    r.model,
                    *[_fmt(r.accuracy.get(label.value, 0.0)) for label in Accuracy],
                    _fmt(r.oi_incorrect),
                ]
                for r in a.models
            ],
        ),
        (
            "Accumulation",
            "per model, prompt and arm; slope and R² from one OLS fit over all personas' "
            "(round, |M|) points pooled (the paper: 2 personas x 8 rounds = 16 points), for all "
            "entries and for the entries the model marks inferred; removal and revision by "
            "semantic match (see 'matching'); revision % after an explicit correction, reveal "
            "revision % of inferences at odds with a later revealed fact (n = such inferences)",
            [
                "model",
                "prompt",
                "guard",
                "personas",
                "Acc(M)",
                "slope",
                "R²",
                "inferred Acc",
                "inferred slope",
                "inferred R²",
                "removal %",
                "revision %",
                "reveal revision % (n)",
                "|M| per round",
                "inferred per round",
            ],
            [
                [
                    r.model,
                    r.policy,
                    "on" if r.guarded else "off",
                    str(r.personas),
                    _fmt(r.acc, 2),
                    _fmt(r.slope, 2),
                    _fmt(r.r2, 3),
                    _fmt(r.inferred_acc, 2),
                    _fmt(r.inferred_slope, 2),
                    _fmt(r.inferred_r2, 3),
                    _fmt(r.removal_rate),
                    _fmt(r.revision_rate),
                    f"{_fmt(r.reveal_revision_rate)} ({r.reveal_conflicts})",
                    " ".join(_fmt(s) for s in r.sizes),
                    " ".join(_fmt(s) for s in r.inferred_sizes),
                ]
                for r in a.accum
            ],
        ),
        (
            "With vs without the guard",
            "pollution = % of stored entries the judge calls OI; grounded retention = % of "
            "GROUNDED claims kept (task) or of revealed facts still held (memory). 'facts' "
            "counts what the guard stores as facts; '+hyp' adds what it stores as hypotheses; "
            "'self-audit' keeps what the model's own self-audit does not call OI (task claims "
            "matched semantically to self-audit claims; 'matched' = % that found one)",
            [
                "model",
                "memory path",
                "pollution: none",
                "guard facts",
                "guard +hyp",
                "self-audit",
                "retention: none",
                "guard facts",
                "guard +hyp",
                "self-audit",
                "stored: none / facts / +hyp / self-audit",
                "matched %",
            ],
            [
                [
                    g.model,
                    g.path,
                    _fmt(g.pollution_without),
                    _fmt(g.pollution_with),
                    _fmt(g.pollution_with_hypotheses),
                    _fmt(g.pollution_self_audit),
                    _fmt(g.grounded_retention_without),
                    _fmt(g.grounded_retention_with),
                    _fmt(g.grounded_retention_with_hypotheses),
                    _fmt(g.grounded_retention_self_audit),
                    f"{g.facts_without} / {g.facts_with} / {g.stored_with_hypotheses} / "
                    f"{g.stored_self_audit if g.path == 'task claims' else '–'}",
                    _fmt(g.self_audit_matched),
                ]
                for g in a.guard
            ],
        ),
    ]
    sections.extend(fidelity_sections(a))
    sections.append(
        (
            "Cost",
            "fresh calls only; cached calls cost nothing this run",
            [
                "model",
                "calls",
                "cached",
                "prompt tokens",
                "completion tokens",
                "cost USD",
                "calls with unknown price",
                "failed units",
            ],
            [
                [
                    model,
                    str(acc.calls),
                    str(acc.cached_calls),
                    str(acc.prompt_tokens),
                    str(acc.completion_tokens),
                    acc.cost_text(),
                    str(acc.cost_unknown_calls),
                    failed,
                ]
                for model, acc, failed in [
                    *[(m, x, "") for m, x in a.accounting_by_model.items()],
                    *(
                        [("guard arm's audit", a.guard_audit_accounting, "")]
                        if a.guard_audit_accounting.calls
                        else []
                    ),
                    ("all", a.accounting, str(a.failed_units)),
                ]
            ],
        )
    )
    return sections


def unfinished_note(a: RunAnalysis) -> str:
    """An interrupted (or still running) run: what its figures cover, stage by stage."""
    short = [
        f"{stage} {a.recorded_units.get(stage, 0)} of {n}"
        for stage, n in a.manifest.expected_units.items()
        if a.recorded_units.get(stage, 0) < n
    ]
    covered = f" (units recorded: {', '.join(short)})" if short else ""
    return (
        f"This run has not finished: it was interrupted, or is still running{covered}. Every "
        "figure covers the recorded units only; run its command again to resume it."
    )


def _banner(a: RunAnalysis) -> str | None:
    notes = []
    offline = a.manifest.offline_models
    if offline:
        notes.append(
            f"Models answered by the offline mock provider ({', '.join(offline)}): these "
            "figures exercise the pipeline and are not measurements of any model."
        )
    if a.manifest.finished is False:
        notes.append(unfinished_note(a))
    if a.skipped_lines:
        notes.append(
            f"{len(a.skipped_lines)} unreadable records line(s) left out of every figure "
            f"({'; '.join(a.skipped_lines[:5])}{'; ...' * (len(a.skipped_lines) > 5)})."
        )
    return " ".join(notes) or None


def render_markdown(a: RunAnalysis, run_dir: Path, plot_files: dict[str, str]) -> str:
    cfg = a.manifest.config
    out = [f"# MirageBench report: {run_dir.name}", ""]
    banner = _banner(a)
    if banner:
        out += [f"> **{banner}**", ""]
    out += [
        f"Subjects: {', '.join(cfg.models)} · judge: {cfg.judge} · seed {cfg.seed} · "
        f"guard: {cfg.guard.value} · started {a.manifest.started_at}",
        "",
        f"Run command: `{shlex.join(a.manifest.command) or 'mirage bench run ...'}`  ",
        f"Regenerate this report: `mirage bench report {run_dir}`",
        "",
    ]
    for title, note, header, rows in _sections(a, run_dir):
        out += [f"## {title}", "", f"_{note}_", "", _md_table(header, rows), ""]
    out += ["## Plots", ""]
    out += [f"![{caption}]({plot_files[name]})" for name, caption, _ in PLOTS]
    out += ["", "## Prompts", ""]
    out += [f"- `{name}@{version}`" for name, version in sorted(a.manifest.prompts.items())]
    return "\n".join(out) + "\n"


def render_html(a: RunAnalysis, run_dir: Path, images: dict[str, bytes]) -> str:
    e = html.escape
    cfg = a.manifest.config
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>MirageBench report: {e(run_dir.name)}</title>",
        "<style>body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;"
        "padding:0 1em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em;"
        "font-size:13px}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}"
        "td:first-child,th:first-child{text-align:left}th{background:#f3f3f3}"
        ".banner{background:#fff3cd;border:1px solid #e0c060;padding:.7em 1em}"
        "img{max-width:100%;border:1px solid #eee;margin:.5em 0}code{background:#f5f5f5}"
        ".note{color:#666;font-size:13px}</style></head><body>",
        f"<h1>MirageBench report: {e(run_dir.name)}</h1>",
    ]
    banner = _banner(a)
    if banner:
        parts.append(f"<p class='banner'><strong>{e(banner)}</strong></p>")
    parts.append(
        f"<p>Subjects: {e(', '.join(cfg.models))} · judge: {e(cfg.judge)} · seed {cfg.seed} · "
        f"guard: {e(cfg.guard.value)} · started {e(a.manifest.started_at)}<br>"
        f"Regenerate: <code>mirage bench report {e(str(run_dir))}</code></p>"
    )
    for title, note, header, rows in _sections(a, run_dir):
        parts.append(f"<h2>{e(title)}</h2><p class='note'>{e(note)}</p>")
        parts.append("<div style='overflow-x:auto'><table><tr>")
        parts.append("".join(f"<th>{e(h)}</th>" for h in header) + "</tr>")
        for row in rows:
            parts.append("<tr>" + "".join(f"<td>{e(cell)}</td>" for cell in row) + "</tr>")
        parts.append("</table></div>")
    parts.append("<h2>Plots</h2>")
    for name, caption, _ in PLOTS:
        data = base64.b64encode(images[name]).decode("ascii")
        parts.append(
            f"<h3>{e(caption)}</h3><img alt='{e(caption)}' src='data:image/png;base64,{data}'>"
        )
    parts.append("<h2>Prompts</h2><ul>")
    parts += [f"<li><code>{e(n)}@{e(v)}</code></li>" for n, v in sorted(a.manifest.prompts.items())]
    parts.append("</ul></body></html>")
    return "\n".join(parts)


def write_report(
    run_dir: str | Path,
    out_dir: str | Path | None = None,
    *,
    matcher: SemanticMatcher | None = None,
) -> ReportFiles:
    """Write the report of a run. A records line that is not a JSON record is left out of every
    figure: silently when it is a file's last line (the torn line of a killed run), otherwise
    named with why in ``ReportFiles.skipped_lines``, in ``analysis.json`` and in the report's
    banner; so is a JSON line that is not a valid record of its file's kind, wherever it is. It
    is a warning rather than a refusal because a killed run that was then resumed legitimately
    leaves its torn line in the middle of the file (its unit redone further down); more such
    lines than resumes mean a damaged file, and the warning says where."""
    run_path = Path(run_dir)
    analysis = analyse(run_path, matcher=matcher)
    target = Path(out_dir) if out_dir else run_path / "report"
    (target / "plots").mkdir(parents=True, exist_ok=True)
    images = render_plots(analysis)
    plot_paths: list[Path] = []
    for name, data in images.items():
        path = target / "plots" / f"{name}.png"
        path.write_bytes(data)
        plot_paths.append(path)
    md = target / "report.md"
    md.write_text(
        render_markdown(analysis, run_path, {n: f"plots/{n}.png" for n in images}), encoding="utf-8"
    )
    page = target / "report.html"
    page.write_text(render_html(analysis, run_path, images), encoding="utf-8")
    board = target / "leaderboard.csv"
    with board.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(LEADERBOARD_COLUMNS)
        writer.writerows(leaderboard_rows(analysis))
    (target / "analysis.json").write_text(analysis.model_dump_json(indent=2), encoding="utf-8")
    return ReportFiles(md, page, board, plot_paths, tuple(analysis.skipped_lines))
