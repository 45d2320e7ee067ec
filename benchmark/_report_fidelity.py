"""Report tables about how far the figures can be trusted: failed units, params sent."""

from __future__ import annotations

import json
import math

from mirage_guard.benchmark._analysis import RunAnalysis

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
        note,
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


def fidelity_sections(a: RunAnalysis) -> list[Section]:
    sections = [failures_section(a), params_section(a)]
    if a.manifest.config.guard.value != "off":
        sections.append(guard_data_section(a))
    return sections
