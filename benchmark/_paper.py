"""The paper's published figures next to this run's: what compares, what does not, and why.

The figures are ``benchmark/data/paper_numbers.json``, a verbatim copy of the team's
``shared/data/paper_numbers.json`` (its ``source`` field says where they come from); only
figures stated there are compared. Nothing here makes a number comparable that is not: a figure
is marked comparable only when the run has the paper's shape (every model of the figure, 150
personas, 6 tasks, no offline mock model, no failed unit of the stage), and the report prints the
reason otherwise.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel

from mirage_guard.benchmark._analysis import RunAnalysis
from mirage_guard.benchmark._schemas import ClaimUnits

PAPER_FILE = "paper_numbers.json"


@cache
def paper_numbers() -> dict[str, Any]:
    resource = resources.files("mirage_guard.benchmark").joinpath("data", PAPER_FILE)
    data: dict[str, Any] = json.loads(resource.read_text(encoding="utf-8"))
    return data


class PaperRow(BaseModel):
    figure: str
    paper: str
    run: str
    comparable: bool
    why_not: str = ""
    computed_by: str


def _key(model: str) -> str:
    return re.sub(r"[^a-z0-9]", "", model.rsplit("/", 1)[-1].lower())


def _fmt(x: float, digits: int = 1) -> str:
    return "–" if not math.isfinite(x) else f"{x:.{digits}f}"


def shape_problems(a: RunAnalysis) -> list[str]:
    """Why this run's aggregates are not the paper's (empty: same shape)."""
    cfg, abstract = a.manifest.config, paper_numbers()["abstract"]
    problems = []
    if a.manifest.offline_models:
        problems.append("offline mock models answered (not measurements)")
    n_personas = cfg.limit or abstract["personas"]
    if cfg.personas_file is not None:
        problems.append("another persona file")
    if n_personas < abstract["personas"] or cfg.personas:
        problems.append(f"persona subset (paper: {abstract['personas']})")
    if len(cfg.tasks) < abstract["tasks"]:
        problems.append(f"{len(cfg.tasks)} of {abstract['tasks']} tasks")
    if len(cfg.models) != abstract["models"]:
        problems.append(f"{len(cfg.models)} models (paper: {abstract['models']})")
    if cfg.claim_units is ClaimUnits.SENTENCES:
        problems.append("claims are the answers' sentences (--claim-units sentences), not atomic")
    if a.failed_units:
        problems.append(f"{a.failed_units} failed unit(s)")
    return problems


def _row(
    figure: str,
    paper: str,
    run: str,
    computed_by: str,
    problems: list[str],
) -> PaperRow:
    return PaperRow(
        figure=figure,
        paper=paper,
        run=run,
        comparable=not problems,
        why_not="; ".join(problems),
        computed_by=computed_by,
    )


def _mean(values: list[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return sum(finite) / len(finite) if finite else math.nan


def paper_vs_run(a: RunAnalysis) -> list[PaperRow]:
    """One row per published aggregate (see benchmark/README.md for the function of each)."""
    p = paper_numbers()
    ab, t1 = p["abstract"], p["table1_judge_percent"]
    shape = shape_problems(a)
    rows: list[PaperRow] = []

    def add(figure: str, paper: str, run: str, by: str, extra: Sequence[str] = ()) -> None:
        rows.append(_row(figure, paper, run, by, [*shape, *extra]))

    c, lo_hi = a.self_vs_judge, ab["oi_range_percent"]
    ois = [r.judge.oi for r in a.models if math.isfinite(r.judge.oi)]
    add(
        "judged claims (Task outputs)",
        f"{ab['judged_claims']:,}",
        f"{sum(r.judge.n for r in a.models):,}",
        "analysis.ModelRow.judge.n, summed",
    )
    add("OI macro, %", f"{ab['oi_macro_percent']}", _fmt(a.oi_macro), "metrics.oi_macro")
    add("OI micro, %", f"{ab['oi_micro_percent']}", _fmt(a.oi_micro), "metrics.oi_micro")
    add(
        "OI range over models, %",
        f"{lo_hi[0]}–{lo_hi[1]}",
        f"{_fmt(min(ois))}–{_fmt(max(ois))}" if ois else "–",
        "metrics.oi_rate per model",
    )
    add(
        "cross-model mean stereotype share, %",
        f"{t1['cross_model_means']['stereotype']}",
        _fmt(_mean([r.judge.stereotype for r in a.models])),
        "metrics.label_shares, mean over models",
    )
    add(
        "cross-model mean fabricated share, %",
        f"{t1['cross_model_means']['fabricated']}",
        _fmt(_mean([r.judge.fabricated for r in a.models])),
        "metrics.label_shares, mean over models",
    )
    runs_by_key = {_key(r.model): r for r in a.models}
    for name, oi in t1["models_oi"].items():
        row = runs_by_key.get(_key(name))
        rows.append(
            _row(
                f"judge OI {name}, %",
                f"{oi}",
                _fmt(row.judge.oi) if row else "not run",
                "metrics.oi_rate",
                [] if row is None else [s for s in shape if "models" not in s],
            )
            if row
            else PaperRow(
                figure=f"judge OI {name}, %",
                paper=f"{oi}",
                run="not run",
                comparable=False,
                why_not="model not in this run",
                computed_by="metrics.oi_rate",
            )
        )
    for name, v in p["self_audit_oi_percent"].items():
        row = runs_by_key.get(_key(name))
        rows.append(
            PaperRow(
                figure=f"self-audit vs judge OI {name}, %",
                paper=f"{v['self']} vs {v['judge']}",
                run=f"{_fmt(row.self_oi)} vs {_fmt(row.judge_oi_same_units)}" if row else "not run",
                comparable=row is not None and not [s for s in shape if "models" not in s],
                why_not="model not in this run"
                if row is None
                else "; ".join(s for s in shape if "models" not in s),
                computed_by="analysis._model_row (same outputs)",
            )
        )
    add(
        "Spearman ρ self vs judge (p)",
        f"{ab['self_vs_judge_spearman_rho']} ({ab['self_vs_judge_p']})",
        f"{_fmt(c.coefficient, 2)} ({_fmt(c.p_value, 3)})",
        "metrics.spearman",
    )
    add(
        "ρ bootstrap 95 % CI",
        f"[{ab['rho_bootstrap_ci'][0]}, {ab['rho_bootstrap_ci'][1]}]",
        f"[{_fmt(c.ci[0], 2)}, {_fmt(c.ci[1], 2)}]",
        "metrics.bootstrap_spearman_ci",
    )
    aurocs = [r.within_auroc for r in a.models if math.isfinite(r.within_auroc)]
    add(
        "within-model AUROC range",
        f"{ab['within_model_auroc_range'][0]}–{ab['within_model_auroc_range'][1]}",
        f"{_fmt(min(aurocs), 2)}–{_fmt(max(aurocs), 2)}" if aurocs else "–",
        "metrics.within_model_auroc",
    )
    add(
        "models with within-model AUROC > 0.75",
        f"{ab['models_with_auroc_above_0_75']} of {ab['models']}",
        f"{sum(x > 0.75 for x in aurocs)} of {len(a.models)}",
        "metrics.within_model_auroc",
    )
    probe = [r.probe_error for r in a.models if math.isfinite(r.probe_error)]
    add(
        "probe error range, %",
        f"{ab['probe_error_percent_range'][0]}–{ab['probe_error_percent_range'][1]}",
        f"{_fmt(min(probe))}–{_fmt(max(probe))}" if probe else "–",
        "analysis._model_row probe_error (see README: Probe error)",
    )
    add(
        "probe–task gap, points",
        f"{ab['probe_task_gap_points']}",
        _fmt(_mean([r.probe_task_gap for r in a.models])),
        "analysis._model_row probe_task_gap (mean over models)",
    )
    add(
        "output length vs OI, Pearson r (self-audit data)",
        f"{ab['length_oi_pearson_r']}",
        _fmt(a.length_vs_self_oi.coefficient, 2),
        "metrics.pearson on analysis.length_vs_self_oi",
    )
    g = p["persona_groups_percent"]
    for name, key in (
        ("stereotypical", "stereotypical"),
        ("counter", "counter_stereotypical"),
        ("neutral", "neutral"),
    ):
        s = a.by_group.get(name)
        add(
            f"OI {name} personas (S + F), %",
            f"{g[key]['oi']} ({g[key]['stereotype']} + {g[key]['fabricated']})",
            f"{_fmt(s.oi)} ({_fmt(s.stereotype)} + {_fmt(s.fabricated)})" if s else "–",
            "metrics.label_shares by group",
        )
    add(
        "Δ OI stereotypical − counter, points",
        f"{g['delta_stereo_minus_counter_points']}",
        _fmt(a.group_delta),
        "metrics.group_delta",
    )
    deltas = [r.group_delta for r in a.models if math.isfinite(r.group_delta)]
    add(
        "per-model Δ range, points (models with Δ > 0)",
        f"{g['per_model_delta_range'][0]}–{g['per_model_delta_range'][1]}",
        f"{_fmt(min(deltas))}–{_fmt(max(deltas))} ({sum(d > 0 for d in deltas)} of {len(deltas)})"
        if deltas
        else "–",
        "metrics.group_delta per model",
    )
    tasks = p["per_task_oi_percent"]
    for task, key in (
        ("gift", "gift"),
        ("letter", "recommendation_letter"),
        ("apartment", "apartment"),
    ):
        published = tasks[key] if isinstance(tasks[key], float) else tasks[key]["oi"]
        s = a.by_task.get(task)
        add(
            f"OI task {key}, %",
            f"{published}",
            _fmt(s.oi) if s else "not run",
            "metrics.label_shares by task",
        )
    acc = ab["accum"]
    fits = [r for r in a.accum if not r.guarded and r.policy == "retain"]
    add(
        f"Accum: models with pooled R² > {acc['r2_above']}",
        f"{acc['linear_models']} of {ab['models']}",
        f"{sum(r.r2 > acc['r2_above'] for r in fits)} of {len(fits)}",
        "metrics.pooled_accumulation (retain prompt, no guard)",
        extra=[] if all(r.personas == acc["personas"] for r in fits) else ["Accum persona count"],
    )
    slopes = [r.slope for r in fits if math.isfinite(r.slope)]
    add(
        "Accum slope range, entries/round",
        f"{acc['slope_range'][0]}–{acc['slope_range'][1]}",
        f"{_fmt(min(slopes))}–{_fmt(max(slopes))}" if slopes else "–",
        "metrics.pooled_accumulation",
    )
    removal = [r.removal_rate for r in fits if math.isfinite(r.removal_rate)]
    add(
        "Accum fastest removal, %",
        f"{acc['fastest_removal_percent_range'][0]}–{acc['fastest_removal_percent_range'][1]}",
        _fmt(max(removal)) if removal else "–",
        "metrics.removal_rate_matched (semantic)",
    )
    jh = ab["judge_vs_human"]
    agreement = a.judge_agreement
    why = [] if agreement else ["no human labels in RUN_DIR/human_labels.jsonl"]
    add(
        "judge vs human κ 4-class / binary",
        f"{jh['kappa_4class']} / {jh['kappa_binary']}",
        f"{_fmt(agreement.kappa, 3)} / {_fmt(agreement.kappa_binary, 3)}" if agreement else "–",
        "metrics.cohen_kappa via _judge_validation.compare",
        extra=why,
    )
    add(
        "judge vs human accuracy 4-class / binary",
        f"{jh['accuracy_4class']} / {jh['accuracy_binary']}",
        f"{_fmt(agreement.accuracy, 3)} / {_fmt(agreement.accuracy_binary, 3)}"
        if agreement
        else "–",
        "metrics.agreement via _judge_validation.compare",
        extra=why,
    )
    fabricated = (agreement.per_class.get("FABRICATED") or {}) if agreement else {}
    add(
        "judge vs human FABRICATED recall",
        f"{jh['fabricated_recall']}",
        _fmt(fabricated.get("recall", math.nan), 3),
        "metrics.per_class_scores",
        extra=why,
    )
    add(
        "judge vs human: adjacent-class share of disagreements",
        f"{jh['adjacent_disagreement_share']} ({jh['disagreements']} disagreements)",
        f"{_fmt(agreement.adjacent_disagreement_share, 2)} ({agreement.disagreements})"
        if agreement
        else "–",
        "metrics.disagreement_structure",
        extra=why,
    )
    return rows
