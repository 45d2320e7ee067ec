"""The guard's cross-validated figures (`calibrate fit` without a dev split): every claim is
decided by the real guard with an audit profile fitted on the other folds only."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from mirage_guard.calibration import (
    FeatureTable,
    evaluate,
    featurize,
    fit_profile,
    guard_metrics,
    heldout_guard_eval,
    load_examples,
)
from mirage_guard.guard import AuditMode, AuditVerdict, Guard
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.evidence import EvidenceLinker
from mirage_guard.guard.scoring import CalibrationProfile, ProfileMode
from tests.calibration.factories import labelled_verdicts, make_profile
from tests.calibration.test_fit_and_eval import _write_claims
from tests.fakes.embedder import HashingEmbedder

WRITER, PROMPT = "mock/writer", "self_audit@0123456789ab"


class _Folds:
    """A fit and a guard factory that remember which claims each profile was fitted on and
    which profile decided each claim."""

    def __init__(self, linker: EvidenceLinker, path: Path) -> None:
        self.linker, self.path = linker, path
        self.fitted_on: list[set[str]] = []
        self.decided_by: dict[str, int] = {}

    def fit(self, table: FeatureTable) -> CalibrationProfile:
        self.fitted_on.append({e.claim.claim_id for e in table.examples})
        return fit_profile(
            table,
            mode=ProfileMode.SELF_AUDIT_SEPARATE,
            data_path=self.path,
            split="train",
            embedder=self.linker.embedder.name,
            writer_model=WRITER,
            prompt_version=PROMPT,
        )

    def guard_for(self, profile: CalibrationProfile) -> Guard:
        guard = Guard(
            linker=self.linker,
            evidence_profile=make_profile(),
            audit_mode=AuditMode.SEPARATE,
            audit_profile=profile,
            writer_model=WRITER,
        )
        fold, atag = len(self.fitted_on) - 1, guard.atag

        async def recording(turns: Any, candidates: Any, **kw: Any) -> Any:
            for c in candidates:
                self.decided_by[c.id] = fold
            return await atag(turns, candidates, **kw)

        guard.atag = recording  # type: ignore[method-assign]
        return guard


@pytest.fixture
def labelled(tmp_path: Path) -> tuple[Path, FeatureTable, dict[str, AuditVerdict]]:
    path = _write_claims(tmp_path / "claims.jsonl")
    examples = load_examples(path)
    verdicts = labelled_verdicts(examples)
    return path, featurize(examples, EvidenceLinker(HashingEmbedder()), verdicts), verdicts


def test_no_claim_is_decided_by_a_profile_fitted_on_it(
    labelled: tuple[Path, FeatureTable, dict[str, AuditVerdict]],
) -> None:
    path, table, verdicts = labelled
    folds = _Folds(EvidenceLinker(HashingEmbedder()), path)
    held = heldout_guard_eval(
        table, verdicts, fit=folds.fit, guard_for=folds.guard_for, data="held", n_boot=20
    )
    assert held.n_folds == 4  # four personas: one fold each
    assert held.skipped == []
    assert held.report is not None
    assert held.report.n == 20
    every = {e.claim.claim_id for e in table.examples}
    assert set(folds.decided_by) == every
    for claim, fold in folds.decided_by.items():
        assert claim not in folds.fitted_on[fold]
    # each persona's claims are decided by one guard, and every other claim trained it
    by_persona: dict[str, set[int]] = {}
    for e in table.examples:
        by_persona.setdefault(e.conversation_id, set()).add(folds.decided_by[e.claim.claim_id])
    assert all(len(f) == 1 for f in by_persona.values())
    for e in table.examples:
        same = {x.claim.claim_id for x in table.examples if x.conversation_id == e.conversation_id}
        assert folds.fitted_on[folds.decided_by[e.claim.claim_id]] == every - same
    # the figures are guard eval's on those decisions
    metrics = guard_metrics(held.report, "heldout")
    assert metrics["heldout_guard_n"] == 20.0
    assert metrics["heldout_guard_three_way"] == held.report.provenance_accuracy
    assert metrics["heldout_guard_kappa"] == held.report.kappa_binary


def test_a_user_is_one_group_whatever_its_conversations(
    labelled: tuple[Path, FeatureTable, dict[str, AuditVerdict]],
) -> None:
    """A traffic sample's ``group_id`` (one user, several writes) keeps the user whole."""
    path, table, verdicts = labelled
    users = {"p1": "u1", "p2": "u1", "p3": "u2", "p4": "u3"}
    grouped = dataclasses.replace(
        table,
        examples=[
            dataclasses.replace(
                e, claim=e.claim.model_copy(update={"group_id": users[e.conversation_id]})
            )
            for e in table.examples
        ],
    )
    folds = _Folds(EvidenceLinker(HashingEmbedder()), path)
    held = heldout_guard_eval(
        grouped, verdicts, fit=folds.fit, guard_for=folds.guard_for, data="held", n_boot=20
    )
    assert held.n_folds == 3
    u1 = {e.claim.claim_id for e in grouped.examples if e.conversation_id in ("p1", "p2")}
    assert len({folds.decided_by[c] for c in u1}) == 1


def test_a_fold_that_cannot_be_fitted_is_said_and_left_out(
    labelled: tuple[Path, FeatureTable, dict[str, AuditVerdict]],
) -> None:
    path, table, verdicts = labelled
    folds = _Folds(EvidenceLinker(HashingEmbedder()), path)

    def fit(t: FeatureTable) -> CalibrationProfile:
        if {e.conversation_id for e in t.examples} == {"p1", "p2", "p3"}:
            raise InputError("fitting needs both classes in the data")
        return folds.fit(t)

    held = heldout_guard_eval(
        table, verdicts, fit=fit, guard_for=folds.guard_for, data="held", n_boot=20
    )
    assert held.n_folds == 4
    (why,) = held.skipped
    assert why.startswith("fold ")
    assert "of 4 (5 claims) left out: fitting needs both classes" in why
    assert held.report is not None
    assert held.report.n == 15
    assert not any(c.startswith("p4-") for c in folds.decided_by)


def test_one_group_has_nothing_to_hold_out(
    labelled: tuple[Path, FeatureTable, dict[str, AuditVerdict]],
) -> None:
    path, table, verdicts = labelled
    one = dataclasses.replace(
        table,
        examples=[
            dataclasses.replace(e, claim=e.claim.model_copy(update={"group_id": "u"}))
            for e in table.examples
        ],
    )
    folds = _Folds(EvidenceLinker(HashingEmbedder()), path)
    held = heldout_guard_eval(
        one, verdicts, fit=folds.fit, guard_for=folds.guard_for, data="held", n_boot=20
    )
    assert (held.report, held.n_folds, held.skipped) == (None, 0, [])
    assert folds.fitted_on == []


async def test_guard_metrics_leave_out_what_could_not_be_computed(
    labelled: tuple[Path, FeatureTable, dict[str, AuditVerdict]],
) -> None:
    """A figure of one class (AUROC, its CI) is not recorded as NaN (a profile's JSON could not
    be read back)."""
    from mirage_guard.calibration import decide_all

    path, table, verdicts = labelled
    folds = _Folds(EvidenceLinker(HashingEmbedder()), path)
    guard = folds.guard_for(folds.fit(table))
    grounded = [e for e in table.examples if e.claim.label.value == "GROUNDED"]
    try:
        decisions = await decide_all(guard, grounded, verdicts)
    finally:
        guard.close()
    report = evaluate(grounded, decisions, data="one class", n_boot=20)
    metrics = guard_metrics(report, "dev")
    assert "dev_guard_auroc" not in metrics
    assert "dev_guard_auroc_ci" not in metrics
    assert metrics["dev_guard_n"] == 8.0
    assert "dev_guard_three_way" in metrics
    profile = make_profile().model_copy(update={"metrics": metrics})
    assert CalibrationProfile.model_validate_json(profile.model_dump_json()).metrics == metrics
