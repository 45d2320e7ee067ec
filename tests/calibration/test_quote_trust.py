"""`mirage calibrate fit` learns how far a writer's self-audit quotes can be trusted.

Two scripted writers give the same (true) labels on the same hand-written claims; one quotes
the user honestly, the other invents its quotes. The fitted profiles differ only in what the
quotes taught them.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from mirage_guard.calibration import collect_verdicts, load_verdicts, save_verdicts
from mirage_guard.calibration._data import load_examples
from mirage_guard.calibration._jobs import featurize, fit_profile
from mirage_guard.guard import AuditVerdict, Label, QuoteCheck, SelfAuditor
from mirage_guard.guard.evidence import EvidenceLinker
from mirage_guard.guard.scoring import QUOTE_FEATURES, CalibrationProfile, ProfileMode
from tests.calibration.factories import labelled_verdicts
from tests.calibration.test_fit_and_eval import _write_claims
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.llm import QuoteStyle, labelling_llm


@pytest.fixture(scope="module")
def linker() -> EvidenceLinker:
    return EvidenceLinker(HashingEmbedder())


def _fit(
    claims: Path, linker: EvidenceLinker, style: QuoteStyle, tmp_path: Path
) -> tuple[CalibrationProfile, dict[str, AuditVerdict]]:
    examples = load_examples(claims)
    truth = {e.claim.claim_id: e.claim.label for e in examples}
    llm = labelling_llm(lambda cid: truth[cid], model=f"mock/{style}", quoting=style)
    auditor = SelfAuditor(llm)
    verdicts, failed = anyio.run(lambda: collect_verdicts(examples, auditor))
    assert not failed
    # through the verdicts file, as `mirage calibrate audit` -> `fit` does
    path = tmp_path / f"{style}.jsonl"
    save_verdicts(path, verdicts, writer_model=llm.model, prompt_version=auditor.prompt_version)
    loaded, model, prompt = load_verdicts(path)
    assert loaded == verdicts
    profile = fit_profile(
        featurize(examples, linker, loaded),
        mode=ProfileMode.SELF_AUDIT_SEPARATE,
        data_path=claims,
        split="all",
        embedder=linker.embedder.name,
        writer_model=model,
        prompt_version=prompt,
    )
    return profile, loaded


def test_fit_learns_high_quote_trust_for_an_honest_writer_and_low_for_an_inventing_one(
    tmp_path: Path, linker: EvidenceLinker
) -> None:
    claims = _write_claims(tmp_path / "claims.jsonl")
    honest, honest_verdicts = _fit(claims, linker, "honest", tmp_path)
    inventing, inventing_verdicts = _fit(claims, linker, "invented", tmp_path)

    quoting = [v for v in honest_verdicts.values() if v.label is not Label.FABRICATED]
    assert {v.quote_check for v in quoting} == {QuoteCheck.VALID}
    assert {v.quote_check for v in inventing_verdicts.values() if v.quote} == {QuoteCheck.INVENTED}

    assert honest.quote_trust is not None
    assert inventing.quote_trust is not None
    assert honest.quote_trust.n == inventing.quote_trust.n == len(quoting)
    assert honest.quote_trust.valid_share == 1.0
    assert honest.quote_trust.agreement_valid == 1.0  # true labels, real quotes
    assert inventing.quote_trust.valid_share == 0.0
    assert inventing.quote_trust.agreement_valid is None  # no valid quote to judge
    assert inventing.quote_trust.agreement_bad == 1.0  # right labels, but unverifiable
    assert honest.quote_trust.trust > honest.quote_trust.min_trust > inventing.quote_trust.trust
    assert honest.trusts_quotes
    assert not inventing.trusts_quotes
    for profile in (honest, inventing):
        assert set(QUOTE_FEATURES) <= set(profile.oi_model.features)
    # stored with the profile and read back
    again = CalibrationProfile.model_validate_json(honest.model_dump_json())
    assert again.quote_trust == honest.quote_trust


def test_verdicts_from_before_quotes_fit_a_profile_that_never_trusts_quotes(
    tmp_path: Path, linker: EvidenceLinker
) -> None:
    claims = _write_claims(tmp_path / "claims.jsonl")
    examples = load_examples(claims)
    old = labelled_verdicts(examples)
    profile = fit_profile(
        featurize(examples, linker, old),
        mode=ProfileMode.SELF_AUDIT_SEPARATE,
        data_path=claims,
        split="all",
        embedder=linker.embedder.name,
        writer_model="mock/old",
        prompt_version="self_audit@abc123abc123",
    )
    assert profile.quote_trust is None
    assert not set(QUOTE_FEATURES) & set(profile.oi_model.features)
    assert not profile.trusts_quotes
