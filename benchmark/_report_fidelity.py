"""Report tables about how far the figures can be trusted: failed units, params sent."""

from __future__ import annotations

import json
import math

from mirage_guard.benchmark._analysis import RunAnalysis
from mirage_guard.benchmark._paper import paper_vs_run, shape_problems

Section = tuple[str, str, list[str], list[list[str]]]


def _fmt(x: float, digits: int = 1) -> str:
    return "–" if not math.isfinite(x) else f"{x:.{digits}f}"


def failures_section(a: RunAnalysis) -> Section:
    return (
        "Failed units",
        "per model called and stage (latest try of each unit); failed units have no claims, "
        "so every OI figure above is over the successful units only. Redo them with "
        "`mirage bench run ... --retry-failed`; an answer cut at --max-tokens is 'truncated'",
        [
            "model",
            "stage",
            "units",
            "failed",
            "failed %",
            "truncated",
            "unparsable",
            "other",
            "units retried",
        ],
        [
            [
                f.model,
                f.stage,
                str(f.units),
                str(f.failed),
                _fmt(f.failed_pct),
                str(f.truncated),
                str(f.unparsable),
                str(f.other),
                str(f.retried_units),
            ]
            for f in a.failures
        ],
    )


def params_section(a: RunAnalysis) -> Section:
    return (
        "Sampling params sent",
        "per model and role, as litellm's capability lookup resolved them (manifest "
        "params_sent); a dropped param was requested but not sent",
        ["model", "role", "requested", "sent", "dropped"],
        [
            [
                model,
                role,
                json.dumps(p.requested, sort_keys=True),
                json.dumps(p.sent, sort_keys=True),
                "; ".join(f"{k}: {why}" for k, why in p.dropped.items()) or "–",
            ]
            for model, roles in a.manifest.params_sent.items()
            for role, p in roles.items()
        ],
    )


def guard_setup(configuration: object, audit_calls: int | None = None) -> str:
    """How the guard arm decided, from the manifest's ``guard_configuration`` (the tagger's
    ``describe()``): audit mode, who labelled (the writer itself or an independent auditor) and
    the policy. A tagger that describes nothing (a test double) is named by its type.
    ``audit_calls``: how many audit calls the run's records hold (the Cost table's row)."""
    described = configuration.get("describe") if isinstance(configuration, dict) else None
    if not isinstance(described, dict):
        return f"guard: {configuration}" if configuration else "guard: not recorded"
    mode = described.get("audit_mode", "off")
    # the guard's own client, metered: its calls are a row of their own in the Cost table
    uncounted = (
        "its calls are the Cost table's \"guard arm's audit\" row"
        if audit_calls is None
        else f"its {audit_calls} call(s) are the Cost table's \"guard arm's audit\" row"
        if audit_calls
        else "no call of it is in this run's records: decisions cached or recorded before audit "
        "calls were counted, or a guard the benchmark did not build"
    )

    if mode == "off":
        audit = "no self-audit (evidence only)"
    elif described.get("auditor_model"):
        audit = (
            f"audit {mode}, labelled by the independent auditor {described['auditor_model']} "
            f"({uncounted})"
        )
    elif described.get("writer_model"):
        audit = (
            f"audit {mode}, labelled by the configured writer model {described['writer_model']} "
            f"(its profile scores its own claims only; {uncounted})"
        )
    else:
        audit = f"audit {mode} with no model configured to label (evidence only)"
    policy = described.get("policy") or {}
    floor = policy.get("stated_min")
    return (
        f"guard: {audit}; inferred → {policy.get('inferred_action', '?')}, generated → "
        f"{policy.get('generated_action', '?')}"
        + (f", stated floor {floor}" if floor is not None else "")
    )


def guard_data_section(a: RunAnalysis) -> Section:
    m = a.manifest
    excluded = len(m.guard_excluded_personas)
    note = (
        "the guard arm (task tagging and both Accum arms) runs only on personas no guard "
        f"profile was fitted on: {excluded} training persona(s) of this run left out. Not "
        "cross-fitted: one shipped profile, measured on its held-out (dev) personas"
    )
    if any(not ref.training_data_known for ref in m.guard_profiles):
        note = (
            "a guard profile was fitted on data other than the packaged claims: which personas "
            "it saw is unknown, so the guard figures may be in-sample"
        )
    return (
        "Guard arm data",
        f"{guard_setup(m.guard_configuration, a.guard_audit_accounting.calls)}. {note}",
        [
            "role",
            "profile",
            "content sha256",
            "fitted on",
            "split",
            "same data file",
            "training personas",
        ],
        [
            [
                ref.role,
                ref.profile_id,
                ref.sha256[:16],
                str(ref.fitted_on.get("path", "")),
                str(ref.fitted_on.get("split", "")),
                "yes"
                if ref.data_sha256_matches
                else "no (split is by persona id)"
                if ref.training_data_known
                else "unknown",
                str(len(ref.training_personas)),
            ]
            for ref in m.guard_profiles
        ],
    )


def self_audit_section(a: RunAnalysis) -> Section:
    return (
        "Self-audit vs judge on the same outputs",
        "only outputs with both a self-audit and a judge record; gap = judge − self, points; "
        "claim ratio = judge claims / self-audit claims (the paper's App. D)",
        ["model", "outputs", "self-audit OI %", "judge OI %", "gap", "judge/self claims"],
        [
            [
                r.model,
                str(r.same_units),
                _fmt(r.self_oi),
                _fmt(r.judge_oi_same_units),
                _fmt(r.gap),
                _fmt(r.judge_self_claim_ratio, 2),
            ]
            for r in a.models
        ],
    )


def judge_agreement_section(a: RunAnalysis) -> Section:
    g = a.judge_agreement
    rows = (
        [
            ["claims", str(g.n)],
            ["Cohen's κ 4-class / binary", f"{_fmt(g.kappa, 3)} / {_fmt(g.kappa_binary, 3)}"],
            ["accuracy 4-class / binary", f"{_fmt(g.accuracy, 3)} / {_fmt(g.accuracy_binary, 3)}"],
            ["disagreements", str(g.disagreements)],
            ["adjacent-class share of disagreements", _fmt(g.adjacent_disagreement_share, 2)],
            ["S↔F confusions", str(g.stereotype_fabricated_confusions)],
        ]
        if g
        else []
    )
    return (
        "Judge vs human",
        "from RUN_DIR/human_labels.jsonl (mirage bench judge-sample, labelled by hand)"
        if g
        else "no human labels: save the labelled sample as RUN_DIR/human_labels.jsonl",
        ["figure", "value"],
        rows,
    )


def paper_section(a: RunAnalysis) -> Section:
    problems = shape_problems(a)
    note = (
        "published figures (benchmark/data/paper_numbers.json) next to this run's. 'comparable' "
        "means the run has the paper's shape; the prompts (the paper's are not public) and the "
        "judge are ours, so even then a difference can come from them; "
    ) + (
        "this run has the paper's shape"
        if not problems
        else "not comparable: " + "; ".join(problems)
    )
    return (
        "Paper vs this run",
        note,
        ["figure", "paper", "this run", "comparable", "why not", "computed by"],
        [
            [
                r.figure,
                r.paper,
                r.run,
                "yes" if r.comparable else "no",
                r.why_not or "–",
                r.computed_by,
            ]
            for r in paper_vs_run(a)
        ],
    )


def samples_section(a: RunAnalysis) -> Section:
    return (
        "Samples",
        f"{a.manifest.config.samples} Task outputs per unit (--samples): judge OI % of each "
        "sample's outputs, their mean and 95 % t-interval across samples",
        ["model", "OI per sample", "mean", "95 % CI"],
        [
            [
                r.model,
                " ".join(_fmt(x) for x in r.oi_by_sample),
                _fmt(r.oi_sample_mean),
                f"[{_fmt(r.oi_sample_ci[0])}, {_fmt(r.oi_sample_ci[1])}]",
            ]
            for r in a.models
        ],
    )


NOT_COMPUTED = (
    "cross-fitted guard profiles (k-fold by persona): not implemented; the guard arm runs on "
    "held-out personas of the one shipped profile instead",
    "judge-vs-human figures: only when RUN_DIR/human_labels.jsonl exists",
)


def not_computed_section(a: RunAnalysis) -> Section:
    return (
        "Not computed",
        "figures this report does not have, and why",
        ["item"],
        [[x] for x in NOT_COMPUTED],
    )


def fidelity_sections(a: RunAnalysis) -> list[Section]:
    sections = [
        paper_section(a),
        self_audit_section(a),
        judge_agreement_section(a),
        failures_section(a),
        params_section(a),
    ]
    if a.manifest.config.guard.value != "off":
        sections.append(guard_data_section(a))
    if a.manifest.config.samples > 1:
        sections.append(samples_section(a))
    sections.append(not_computed_section(a))
    return sections
