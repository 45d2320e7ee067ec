"""Calibration jobs: featurise labelled claims, fit a profile, evaluate, compare profiles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from mirage_guard.calibration._data import Example, file_sha256, group_by_conversation
from mirage_guard.calibration._fit import (
    OI_CLASSES,
    STATED_CLASSES,
    FloatArray,
    IntArray,
    Objective,
    choose_threshold,
    cluster_bootstrap,
    fit_logistic,
    precision_recall_at,
)
from mirage_guard.calibration._quote_trust import fit_quote_trust
from mirage_guard.guard import AuditVerdict, Label, check_quotes, quote_links
from mirage_guard.guard.evidence import PROFILE_FEATURES, EvidenceLinker
from mirage_guard.guard.scoring import (
    AUDIT_FEATURES,
    QUOTE_FEATURES,
    CalibrationProfile,
    DataRef,
    LogisticModel,
    ProfileMode,
    QuoteTrust,
    audit_features,
    feature_version,
    make_profile_id,
    quote_features,
    score_distribution,
)


@dataclass
class FeatureTable:
    examples: list[Example]
    rows: list[dict[str, float]] = field(default_factory=list)
    linked_turn: list[str | None] = field(default_factory=list)
    # the writer's verdict per row, its quote checked against the conversation (audit fits)
    verdicts: list[AuditVerdict | None] = field(default_factory=list)

    @property
    def quoted(self) -> bool:
        """Every row has a verdict whose quote was checked (verdicts from before quotes: no)."""
        return bool(self.verdicts) and all(
            v is not None and v.quote_check is not None for v in self.verdicts
        )

    @property
    def y_oi(self) -> IntArray:
        return np.asarray([int(e.is_oi) for e in self.examples], dtype=np.int64)

    @property
    def clusters(self) -> list[str]:
        return [e.conversation_id for e in self.examples]


def featurize(
    examples: Sequence[Example],
    linker: EvidenceLinker,
    verdicts: Mapping[str, AuditVerdict] | None = None,
) -> FeatureTable:
    """One linker call per conversation (all its claims in one batch); with ``verdicts``, their
    audit features and, for verdicts that carry a quote check, the quote re-checked against the
    conversation and scored against the claim (one more linker call per valid quote)."""
    table = FeatureTable(examples=[])
    for group in group_by_conversation(examples).values():
        turns = group[0].turns
        links = linker.link(turns, [e.candidate for e in group], user_name=group[0].user_name)
        checked = _checked_verdicts(group, verdicts)
        spans = quote_links(linker, [e.candidate for e in group], checked) if checked else {}
        for ex, link in zip(group, links, strict=True):
            row = dict(link.features)
            verdict = None
            if verdicts is not None:
                verdict = checked.get(ex.claim.claim_id) or verdicts[ex.claim.claim_id]
                row.update(audit_features(verdict))
                if verdict.quote_check is not None:
                    row.update(quote_features(verdict, spans.get(ex.claim.claim_id)))
            table.examples.append(ex)
            table.rows.append(row)
            table.linked_turn.append(link.turn_id)
            table.verdicts.append(verdict)
    return table


def _checked_verdicts(
    group: Sequence[Example], verdicts: Mapping[str, AuditVerdict] | None
) -> dict[str, AuditVerdict]:
    """The group's verdicts that carry a quote check, checked again here (never taken on trust)."""
    if verdicts is None:
        return {}
    mine = [verdicts[e.claim.claim_id] for e in group]
    with_quotes = [v for v in mine if v.quote_check is not None]
    return {v.candidate_id: v for v in check_quotes(with_quotes, group[0].turns)}


def fit_profile(
    table: FeatureTable,
    *,
    mode: ProfileMode,
    data_path: Path,
    split: str,
    embedder: str,
    writer_model: str | None = None,
    prompt_version: str | None = None,
    oi_objective: str = "recall>=0.8",
    stated_objective: str = "precision>=0.85",
    c: float = 0.3,
    feature_names: Sequence[str] | None = None,
    never_stated_without_grounded: bool = False,
    support_model: str | None = None,
) -> CalibrationProfile:
    """Fit the OI model and, among non-OI claims, the stated-vs-inferred model.

    ``never_stated_without_grounded``: when the non-OI claims hold no GROUNDED one, fit the OI
    part anyway and give the profile a stated part that never says stated (every claim it
    passes is at most a hypothesis: fail closed) instead of refusing the fit. For judged claims
    (``from-bench``), where it is the judge, not the user, that decided no claim was stated.
    ``support_model``: the sha256 of the claim-support model the features came from (the guard
    refuses the profile with another).
    """
    base = list(feature_names) if feature_names is not None else list(PROFILE_FEATURES)
    features = base + (list(AUDIT_FEATURES) if mode.uses_audit else [])
    quoted = mode.uses_audit and table.quoted
    if quoted:
        features += list(QUOTE_FEATURES)
    y = table.y_oi
    oi_model = fit_logistic(table.rows, y.tolist(), features, c=c, classes=OI_CLASSES)
    p_oi = oi_model.predict_proba(oi_model.matrix(table.rows))
    oi_obj = Objective.parse(oi_objective)
    oi_threshold = choose_threshold(p_oi, y, oi_obj)
    # stated vs inferred, among candidates that are not over-inference
    keep = [i for i, e in enumerate(table.examples) if not e.is_oi]
    rows_ok = [table.rows[i] for i in keep]
    y_stated = np.asarray(
        [int(table.examples[i].claim.label is Label.GROUNDED) for i in keep], dtype=np.int64
    )
    st_obj = Objective.parse(stated_objective)
    stated_part = str(st_obj)
    if never_stated_without_grounded and rows_ok and not y_stated.any():
        stated_model, stated_threshold = never_stated(features), 1.0
        stated_part = "never (no GROUNDED claim to fit on)"
    else:
        stated_model = fit_logistic(
            rows_ok, y_stated.tolist(), features, c=c, classes=STATED_CLASSES
        )
        p_stated = stated_model.predict_proba(stated_model.matrix(rows_ok))
        stated_threshold = choose_threshold(p_stated, y_stated, st_obj)
    precision, recall = precision_recall_at(p_oi, y, oi_threshold)
    trust = fit_quote_trust([v for v in table.verdicts if v], y.tolist()) if quoted else None
    return CalibrationProfile(
        profile_id=make_profile_id(mode, writer_model, prompt_version),
        mode=mode,
        writer_model=writer_model,
        prompt_version=prompt_version,
        embedder=embedder,
        feature_version=feature_version(features),
        support_model=support_model,
        oi_model=oi_model,
        oi_threshold=round(oi_threshold, 6),
        stated_model=stated_model,
        stated_threshold=round(stated_threshold, 6),
        objective=f"oi:{oi_obj}; stated:{stated_part}",
        metrics={
            "train_auroc": float(roc_auc_score(y, p_oi)),
            "train_precision": precision,
            "train_recall": recall,
            **_trust_figures(trust),
        },
        fitted_on=DataRef(
            path=data_path.name, sha256=file_sha256(data_path), n_examples=len(y), split=split
        ),
        # what live scores are compared with (drift): P(OI) on the fitting data
        score_distribution=score_distribution(p_oi, split=split),
        # how far this writer's quotes can be trusted (None: verdicts without quotes)
        quote_trust=trust,
    )


def never_stated(features: Sequence[str]) -> LogisticModel:
    """A stated-vs-inferred model whose P(stated) is ~1e-22 for every claim: with a threshold of
    1.0 it never tags a claim stated."""
    n = len(features)
    return LogisticModel(
        features=list(features), mean=[0.0] * n, scale=[1.0] * n, coef=[0.0] * n, intercept=-50.0
    )


def is_never_stated(profile: CalibrationProfile) -> bool:
    """The profile's stated part is :func:`never_stated` (fitted without a GROUNDED claim)."""
    return profile.stated_model == never_stated(profile.stated_model.features)


def _trust_figures(trust: QuoteTrust | None) -> dict[str, float]:
    """The quote-trust figures `calibrate fit` prints with the others (none without quotes)."""
    if trust is None:
        return {}
    figures = {"quote_valid_share": trust.valid_share, "quote_trust": trust.trust}
    if trust.agreement_valid is not None:
        figures["quote_agreement_valid"] = trust.agreement_valid
    if trust.agreement_bad is not None:
        figures["quote_agreement_bad"] = trust.agreement_bad
    return figures


def oi_scores(profile: CalibrationProfile, table: FeatureTable) -> FloatArray:
    return profile.oi_model.predict_proba(profile.oi_model.matrix(table.rows))


def summarize_scores(
    profile: CalibrationProfile, table: FeatureTable, *, n_boot: int = 1000
) -> dict[str, float | list[float]]:
    """AUROC, precision and recall at the profile's threshold, with cluster-bootstrap CIs."""
    p = oi_scores(profile, table)
    y = table.y_oi
    precision, recall = precision_recall_at(p, y, profile.oi_threshold)
    ci = cluster_bootstrap(p, y, table.clusters, profile.oi_threshold, n_boot=n_boot)
    return {
        "n": float(len(y)),
        "auroc": float(roc_auc_score(y, p)),
        "auroc_ci": ci["auroc"],
        "precision": precision,
        "precision_ci": ci["precision"],
        "recall": recall,
        "recall_ci": ci["recall"],
        "threshold": profile.oi_threshold,
    }
