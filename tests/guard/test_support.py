"""The claim-level support signal: hash-checked weights, word alignment, the decision rule."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mirage_guard.guard import Candidate, EvidenceLink, Policy, Provenance
from mirage_guard.guard._decision import decide, fully_supported
from mirage_guard.guard._reasons import ReasonCode
from mirage_guard.guard.errors import SupportModelError
from mirage_guard.guard.evidence._support import (
    SUPPORT_FEATURES,
    LexicalAligner,
    build_head,
    save_support_dir,
    verify_support_dir,
)
from tests.calibration.factories import make_profile


@pytest.fixture
def support_dir(tmp_path: Path) -> Path:
    out = tmp_path / "support"
    save_support_dir(build_head(n_layers=1), out, {"architecture": {"n_layers": 1}})
    return out


def test_weights_that_match_their_manifest_load(support_dir: Path) -> None:
    manifest = verify_support_dir(support_dir)
    assert len(manifest["sha256"]) == 64


def test_changed_weights_are_refused_with_a_typed_error(support_dir: Path) -> None:
    weights = support_dir / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(SupportModelError, match="sha256"):
        verify_support_dir(support_dir)


def test_missing_weights_are_refused(support_dir: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    shutil.copy(support_dir / "manifest.json", empty / "manifest.json")
    with pytest.raises(SupportModelError, match="missing"):
        verify_support_dir(empty)


@pytest.mark.parametrize(
    ("claim", "evidence", "unsupported"),
    [
        (
            "Went rock climbing in Lisbon last weekend",
            "I went rock climbing last weekend.",
            "lisbon",
        ),
        ("Trains jiu-jitsu two nights a week", "I train jiu-jitsu four nights a week.", "two"),
        ("Does not live in Lisbon", "I live in Lisbon.", "not"),
        ("Goes running on Tuesdays", "I go running on Sundays.", "tuesdays"),
    ],
)
def test_lexical_alignment_names_the_unsupported_word(
    claim: str, evidence: str, unsupported: str
) -> None:
    al = LexicalAligner().align_text(claim, [evidence])
    assert unsupported in al.unsupported_words
    assert 0.0 < al.unsupported_share < 1.0


def test_a_restatement_has_no_unsupported_word() -> None:
    al = LexicalAligner().align_text("Lives in Lisbon", ["I live in Lisbon."])
    assert al.unsupported_words == ()
    assert al.unsupported_share == 0.0


def _link(words: list[str], **support: float) -> EvidenceLink:
    feats = {"unsupported_names": 0.0, "unsupported_numbers": 0.0, "support_model": 1.0, **support}
    return EvidenceLink(
        turn_id="u1", similarity=0.9, span="I live in Lisbon.", features=feats,
        unsupported_words=words,
    )  # fmt: skip


def test_unsupported_words_keep_a_high_p_stated_claim_from_being_stated() -> None:
    d = decide(
        Candidate(text="Lives in Lisbon with two cats"),
        _link(["two"]),
        p_oi=0.01,
        p_stated=0.99,
        profile=make_profile(),
        policy=Policy(),
    )
    assert d.provenance is Provenance.INFERRED
    codes = {r.code: r for r in d.reasons}
    assert codes[ReasonCode.UNSUPPORTED_CONTENT].params["words"] == ["two"]
    assert ReasonCode.NOT_FULLY_SUPPORTED in codes


def test_a_negation_the_user_never_said_blocks_stated() -> None:
    probs = {"sup_entailed": 0.2, "sup_inferable": 0.1, "sup_unsupported": 0.1}
    link = _link(["not"], sup_contradicted=0.6, **probs)
    assert not fully_supported(link)
    d = decide(
        Candidate(text="Does not live in Lisbon"), link, p_oi=0.01, p_stated=0.99,
        profile=make_profile(), policy=Policy(),
    )  # fmt: skip
    assert d.provenance is not Provenance.STATED


def test_a_fully_supported_restatement_is_stated() -> None:
    link = _link([], sup_entailed=0.7, sup_inferable=0.1, sup_unsupported=0.1, sup_contradicted=0.1)
    d = decide(
        Candidate(text="Lives in Lisbon"), link, p_oi=0.01, p_stated=0.99,
        profile=make_profile(), policy=Policy(),
    )  # fmt: skip
    assert d.provenance is Provenance.STATED
    assert all(r.code is not ReasonCode.UNSUPPORTED_CONTENT for r in d.reasons)


def test_without_the_support_model_only_names_and_numbers_block_stated() -> None:
    link = _link(["two"])
    link = link.model_copy(update={"features": {**link.features, "support_model": 0.0}})
    assert fully_supported(link)


def test_support_features_are_part_of_the_feature_vector() -> None:
    from mirage_guard.guard.evidence import FEATURE_NAMES

    assert set(SUPPORT_FEATURES) <= set(FEATURE_NAMES)


def test_a_conclusion_is_not_stated_when_both_support_signals_say_so() -> None:
    from mirage_guard.guard import EvidenceLink
    from mirage_guard.guard._decision import fully_supported

    base = {"support_model": 1.0, "sup_entailed": 0.07, "sup_inferable": 0.75,
            "sup_unsupported": 0.16, "sup_contradicted": 0.02}  # fmt: skip
    night_owl = EvidenceLink(
        turn_id="t2", similarity=0.6, features={**base, "align_unsupported_share": 0.6}
    )
    assert not fully_supported(night_owl)  # mostly unsaid words, and the head reads "inferable"
    paraphrase = night_owl.model_copy(
        update={"features": {**base, "align_unsupported_share": 0.33}}
    )
    assert fully_supported(paraphrase)  # one unaligned word ("enjoys") is a paraphrase
    entailed = night_owl.model_copy(
        update={"features": {**base, "sup_entailed": 0.9, "align_unsupported_share": 0.6}}
    )
    assert fully_supported(entailed)
