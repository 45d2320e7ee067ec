"""Figures of the memory paths: Accum curves (as the paper fits them) and the guard's effect.

Accum: |M_r| and the inferred-entries curve per round, Acc(M), and one OLS fit over all
(round, size) points pooled across the Accum personas (the paper: 2 personas x 8 rounds = 16
points); removal and revision by semantic match (:mod:`benchmark._matching`), revision both after
an explicit correction and after a later revealed fact that is at odds with an inference.

Guard: memory pollution (% of stored entries the judge calls OI) and grounded retention, for
facts only and for facts + hypotheses, against no filter and against filtering by the model's own
self-audit alone.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np
from pydantic import BaseModel, Field

from mirage_guard.benchmark import metrics as m
from mirage_guard.benchmark._matching import SemanticMatcher
from mirage_guard.benchmark._records import (
    AccumRoundRecord,
    GuardTagRecord,
    JudgeRecord,
    SelfAuditRecord,
)
from mirage_guard.guard import Action, Label

RELATED_THRESHOLD = 0.4
"""An inferred entry is 'at odds with' a revealed fact when it is about the same thing (cosine
>= this) without restating it (cosine < the match threshold)."""


def _pct(x: float) -> float:
    return x * 100 if math.isfinite(x) else math.nan


def _nanmean(xs: Iterable[float]) -> float:
    vals = [x for x in xs if math.isfinite(x)]
    return float(np.mean(vals)) if vals else math.nan


class AccumRow(BaseModel):
    model: str
    policy: str
    guarded: bool
    personas: int
    sizes: list[float] = Field(description="mean |M_r| per round")
    inferred_sizes: list[float] = Field(description="mean entries the model marks inferred")
    acc: float
    slope: float = Field(description="OLS slope of |M_r| on r, all personas' points pooled")
    r2: float = Field(description="R² of that pooled fit (the paper's 16 points)")
    inferred_acc: float = math.nan
    inferred_slope: float = math.nan
    inferred_r2: float = math.nan
    removal_rate: float = Field(description="% of entries no entry of the next round matches")
    revision_rate: float = Field(description="% of explicitly corrected entries gone after")
    reveal_revision_rate: float = Field(
        default=math.nan, description="% of inferences at odds with a later revealed fact gone"
    )
    reveal_conflicts: int = 0
    matching: str = ""


def _fit(curves: list[list[float]]) -> m.AccumulationFit:
    return m.pooled_accumulation(curves)


def _reveal_revisions(
    chain: Sequence[AccumRoundRecord], matcher: SemanticMatcher
) -> tuple[int, int]:
    """(inferences at odds with a later revealed fact, how many of them are gone after)."""
    conflicts = gone = 0
    for before, now in itertools.pairwise(chain):
        if not now.revealed:
            continue
        inferred = [e.text for e in before.memory if e.basis == "inferred"]
        if not inferred:
            continue
        sims = matcher.similarity(inferred, now.revealed).max(axis=1)
        at_odds = [
            t
            for t, s in zip(inferred, sims, strict=True)
            if RELATED_THRESHOLD <= s < matcher.threshold
        ]
        if at_odds:
            conflicts += len(at_odds)
            held = matcher.held(at_odds, [e.text for e in now.memory])
            gone += sum(1 for h in held if not h)
    return conflicts, gone


def _corrections(
    chains: Sequence[Sequence[AccumRoundRecord]],
) -> tuple[list[str], list[list[str]]]:
    """Each entry a correction contradicted, with every entry of the memories from that round
    on (the revision rate counts it revised only if no later memory holds it again: an entry
    dropped at the correction and back two rounds later was counted as revised)."""
    contradicted: list[str] = []
    after: list[list[str]] = []
    for chain in chains:
        for i, r in enumerate(chain):
            if r.contradicted:
                contradicted.append(r.contradicted)
                after.append([e.text for later in chain[i:] for e in later.memory])
    return contradicted, after


def accum_rows(records: Sequence[AccumRoundRecord], matcher: SemanticMatcher) -> list[AccumRow]:
    chains: dict[tuple[str, str, bool, str], list[AccumRoundRecord]] = defaultdict(list)
    for r in records:
        chains[(r.model, r.policy.value, r.guarded, r.persona_id)].append(r)
    grouped: dict[tuple[str, str, bool], list[list[AccumRoundRecord]]] = defaultdict(list)
    for (model, policy, guarded, _), rounds in chains.items():
        grouped[(model, policy, guarded)].append(sorted(rounds, key=lambda r: r.round))
    rows: list[AccumRow] = []
    for (model, policy, guarded), persona_chains in sorted(grouped.items()):
        n_rounds = min(len(c) for c in persona_chains)
        if n_rounds < 2:
            continue
        chains_n = [c[:n_rounds] for c in persona_chains]
        sizes = [[float(len(r.memory)) for r in c] for c in chains_n]
        inferred = [
            [float(sum(e.basis == "inferred" for e in r.memory)) for r in c] for c in chains_n
        ]
        fit, fit_inferred = _fit(sizes), _fit(inferred)
        removal = [
            m.removal_rate_matched([[e.text for e in r.memory] for r in c], matcher.held)
            for c in chains_n
        ]
        contradicted, after = _corrections(persona_chains)
        reveal = [_reveal_revisions(c, matcher) for c in chains_n]
        conflicts = sum(x for x, _ in reveal)
        rows.append(
            AccumRow(
                model=model,
                policy=policy,
                guarded=guarded,
                personas=len(persona_chains),
                sizes=list(np.mean(sizes, axis=0)),
                inferred_sizes=list(np.mean(inferred, axis=0)),
                acc=fit.acc,
                slope=fit.slope,
                r2=fit.r2,
                inferred_acc=fit_inferred.acc,
                inferred_slope=fit_inferred.slope,
                inferred_r2=fit_inferred.r2,
                removal_rate=_pct(_nanmean(removal)),
                revision_rate=_pct(m.revision_rate_matched(contradicted, after, matcher.held)),
                reveal_revision_rate=_pct(sum(g for _, g in reveal) / conflicts)
                if conflicts
                else math.nan,
                reveal_conflicts=conflicts,
                matching=f"{matcher.name} cosine >= {matcher.threshold}",
            )
        )
    return rows


class GuardRow(BaseModel):
    """Memory pollution (% of stored entries the judge calls OI) and grounded retention (%)."""

    model: str
    path: str  # "task claims" or "accum memory (retain)" ...
    pollution_without: float
    pollution_with: float = Field(description="guard, facts only")
    grounded_retention_without: float
    grounded_retention_with: float
    facts_without: int
    facts_with: int
    pollution_with_hypotheses: float = Field(default=math.nan, description="facts + hypotheses")
    grounded_retention_with_hypotheses: float = math.nan
    stored_with_hypotheses: int = 0
    pollution_self_audit: float = Field(
        default=math.nan, description="kept what the model's own self-audit calls non-OI"
    )
    grounded_retention_self_audit: float = math.nan
    stored_self_audit: int = 0
    self_audit_matched: float = Field(
        default=math.nan, description="% of claims matched to a self-audit claim"
    )


def _self_audit_keeps(
    tags: Sequence[GuardTagRecord],
    claims_text: dict[str, str],
    audits: dict[tuple[str, str, str, int], SelfAuditRecord],
    matcher: SemanticMatcher,
) -> tuple[list[bool], int]:
    """Per decision, whether a self-audit-only filter keeps the claim, and how many matched.

    Each judge claim is matched to the most similar claim of the model's own self-audit of the
    same output; the filter drops it when that claim is self-labelled STEREOTYPE or FABRICATED.
    A claim the self-audit did not mention is kept (the filter has nothing against it).
    """
    keeps: list[bool] = []
    matched = 0
    for tag in tags:
        audit = audits.get((tag.model, tag.persona_id, tag.task.value, tag.sample))
        texts = [claims_text.get(d.claim_id, "") for d in tag.decisions]
        pool = [c.text for c in audit.claims] if audit else []
        best = matcher.best(texts, pool)
        for j in best:
            if j is None or audit is None:
                keeps.append(True)
                continue
            matched += 1
            keeps.append(not audit.claims[j].label.is_over_inference)
    return keeps, matched


def task_guard_rows(
    tags: Sequence[GuardTagRecord],
    judged: Sequence[JudgeRecord],
    audits: Sequence[SelfAuditRecord],
    matcher: SemanticMatcher,
) -> list[GuardRow]:
    claims_text = {c.claim_id: c.text for r in judged for c in r.claims}
    by_unit = {(a.model, a.persona_id, a.task.value, a.sample): a for a in audits}
    rows: list[GuardRow] = []
    for model in sorted({r.model for r in tags}):
        mine = [r for r in tags if r.model == model]
        decisions = [d for r in mine for d in r.decisions]
        labels = [d.judge_label for d in decisions]
        facts = [d.action is Action.STORE for d in decisions]
        stored = [d.action in (Action.STORE, Action.STORE_AS_HYPOTHESIS) for d in decisions]
        audit_keeps, matched = _self_audit_keeps(mine, claims_text, by_unit, matcher)

        def pollution(keep: list[bool], labels: list[Label] = labels) -> float:
            return _pct(m.oi_rate(lab for lab, k in zip(labels, keep, strict=True) if k))

        def retention(keep: list[bool], labels: list[Label] = labels) -> float:
            return _pct(m.grounded_kept_share(labels, keep))

        everything = [True] * len(labels)
        rows.append(
            GuardRow(
                model=model,
                path="task claims",
                pollution_without=pollution(everything),
                pollution_with=pollution(facts),
                grounded_retention_without=retention(everything),
                grounded_retention_with=retention(facts),
                facts_without=len(labels),
                facts_with=sum(facts),
                pollution_with_hypotheses=pollution(stored),
                grounded_retention_with_hypotheses=retention(stored),
                stored_with_hypotheses=sum(stored),
                pollution_self_audit=pollution(audit_keeps),
                grounded_retention_self_audit=retention(audit_keeps),
                stored_self_audit=sum(audit_keeps),
                self_audit_matched=_pct(matched / len(labels)) if labels else math.nan,
            )
        )
    return rows


def _memory_figures(records: list[JudgeRecord]) -> tuple[float, float, int]:
    """(pollution %, grounded retention %, judged entries) of one arm (NaN if not run)."""
    if not records:
        return math.nan, math.nan, 0
    labels = [c.label for r in records for c in r.claims]
    retention = [
        m.grounded_retention(
            r.evidence_turn_ids[:3], [(c.label, c.source_turn_id) for c in r.claims]
        )
        for r in records
    ]
    return _pct(m.oi_rate(labels)), _pct(_nanmean(retention)), len(labels)


def memory_guard_rows(memory_judged: Sequence[JudgeRecord]) -> list[GuardRow]:
    """Accum memory: without guard vs with guard (facts only; facts + hypotheses)."""
    by_key: dict[tuple[str, str, bool], dict[str, JudgeRecord]] = defaultdict(dict)
    for r in memory_judged:
        if r.policy is None or r.guarded is None:
            continue
        scope = r.memory_scope or "facts"
        by_key[(r.model, r.policy.value, r.guarded)][f"{r.persona_id}|{scope}"] = r
    rows: list[GuardRow] = []
    for model, policy in sorted({(k[0], k[1]) for k in by_key}):

        def arm(
            guarded: bool, scope: str, model: str = model, policy: str = policy
        ) -> list[JudgeRecord]:
            units = by_key.get((model, policy, guarded), {})
            personas = {key.split("|")[0] for key in units}
            # a memory without hypotheses was judged once: its facts are all its entries
            return [
                units.get(f"{p}|{scope}") or units[f"{p}|facts"]
                for p in sorted(personas)
                if f"{p}|{scope}" in units or f"{p}|facts" in units
            ]

        without = _memory_figures(arm(False, "facts"))
        facts = _memory_figures(arm(True, "facts"))
        everything = _memory_figures(arm(True, "facts+hypotheses"))
        rows.append(
            GuardRow(
                model=model,
                path=f"accum memory ({policy})",
                pollution_without=without[0],
                pollution_with=facts[0],
                grounded_retention_without=without[1],
                grounded_retention_with=facts[1],
                facts_without=without[2],
                facts_with=facts[2],
                pollution_with_hypotheses=everything[0],
                grounded_retention_with_hypotheses=everything[1],
                stored_with_hypotheses=everything[2],
            )
        )
    return rows
