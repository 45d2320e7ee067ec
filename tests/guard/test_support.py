"""The claim-level support signal: hash-checked weights, word alignment, the decision rule."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from mirage_guard.guard import Candidate, Decision, EvidenceLink, Policy, Provenance
from mirage_guard.guard._decision import decide, fully_supported
from mirage_guard.guard._reasons import ReasonCode
from mirage_guard.guard.errors import SupportModelError
from mirage_guard.guard.evidence import (
    age_in_decade,
    changed_values,
    denied_stems,
    ended_stems,
    exact_word,
    glued_items,
    glued_phrases,
    list_items,
    retracted_stems,
    round_trips,
    swapped_names,
    trait_words,
    unsaid_habits,
    unsaid_pastime,
)
from mirage_guard.guard.evidence._linker import RETRACT_MIN_SIM, _retracted, _Unit
from mirage_guard.guard.evidence._support import (
    SUPPORT_FEATURES,
    ClaimSupport,
    LexicalAligner,
    TokenAligner,
    TokenText,
    file_sha256,
    verify_support_dir,
)
from tests.calibration.factories import make_profile


@pytest.fixture
def support_dir(tmp_path: Path) -> Path:
    """A model folder as `train-support` writes it: fp16 safetensors + a manifest with its hash."""
    import json

    import torch
    from safetensors.torch import save_file

    out = tmp_path / "support"
    out.mkdir()
    save_file({"classifier.weight": torch.zeros(4, 768, dtype=torch.float16)},
              str(out / "model.safetensors"))  # fmt: skip
    sha = file_sha256(out / "model.safetensors")
    (out / "manifest.json").write_text(json.dumps({"sha256": sha}), encoding="utf-8")
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


@pytest.mark.parametrize("layers", [0, 7, "3"])
def test_a_manifest_with_an_impossible_layer_count_is_refused(
    support_dir: Path, layers: object
) -> None:
    import json

    from mirage_guard.guard.evidence import CrossSupportModel

    manifest = json.loads((support_dir / "manifest.json").read_text(encoding="utf-8"))
    manifest["architecture"] = {"layers": layers}
    (support_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(SupportModelError, match=r"architecture\.layers"):
        CrossSupportModel(support_dir)


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
        ("Goes running on Tuesdays", "I go running on sunday.", "tuesdays"),
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


def test_a_day_is_said_by_its_plural() -> None:
    """ "on Tuesdays" says Tuesday, and a plural day is a word that must be said as it is."""
    for claim, said in (
        ("Swims on Tuesdays", "I swim on tuesday"),
        ("Swims on Tuesday", "swims tuesdays"),
    ):
        assert LexicalAligner().align_text(claim, [said]).unsupported_words == ()
    assert exact_word("Thursdays")


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Returns to work in June, four days a week", "I go back to work in June, 4 days a week."),
        ("Owns a four-person tent", "I have a 4-man tent from a festival."),
        ("Wife is turning 50", "need a gift idea for my wife's 50th."),
        ("Works nights, 10pm to 6am", "i work night shift 10p to 6a"),
        ("Has a 19-foot caravan", "we've just got the old pajero towing a 19ft van"),
    ],
)
def test_a_number_is_said_in_any_of_its_forms(claim: str, evidence: str) -> None:
    """ "four" is said by "4", "50" by "50th", "10pm" by "10p": the same value."""
    al = LexicalAligner().align_text(claim, [evidence])
    assert not any(exact_word(w) for w in al.unsupported_words), al.unsupported_words


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


@pytest.mark.parametrize(
    ("claim", "said", "unsaid"),
    [
        ("Works nights at the hospital in Leeds", "I work nights at the hospital", ["leeds"]),
        ("Has a Labrador named Biscuit", "our lab Biscuit is 3", []),  # a short form
        ("Trish has been DJing for years", "Trish was a DJ", []),  # the word and an ending
        ("Does meal prep on Sundays", "meal prep every sunday", []),  # a day: not a name
        ("Starts kindergarten on Aug 28", "school starts august 28th", []),  # a month's short form
        ("Bridal shower is in Bath", "the bathroom is tiny", ["bath"]),  # begun, not said
        ("Name is Preeti", "my name is Priya", ["preeti"]),
    ],
)  # fmt: skip
def test_unsaid_names(claim: str, said: str, unsaid: list[str]) -> None:
    from mirage_guard.guard.evidence._text import name_words, proper_names, unsaid_names

    assert unsaid_names(proper_names(claim), name_words(said)) == unsaid


def _named_link(names: list[str], **support: float) -> EvidenceLink:
    return _link(names, **support).model_copy(update={"unsaid_names": names})


def test_a_restatement_with_a_name_no_user_turn_says_is_generated() -> None:
    """Read as a restatement but for a name the user never said: glued on, generated (it was
    inferred, like an unsaid number). A conclusion that names a place stays inferred."""
    read = {"sup_entailed": 0.8, "sup_inferable": 0.1, "sup_unsupported": 0.05}
    link = _named_link(["leeds"], sup_contradicted=0.05, unsupported_names=1.0, **read)
    d = decide(
        Candidate(text="Works night shifts at the hospital in Leeds"), link, p_oi=0.05,
        p_stated=0.95, profile=make_profile(), policy=Policy(),
    )  # fmt: skip
    assert d.provenance is Provenance.GENERATED
    (glued,) = [r for r in d.reasons if r.code is ReasonCode.GLUED_DETAIL]
    assert glued.params["words"] == ["leeds"]
    below = decide(
        Candidate(text="Probably lives near Leeds"), link, p_oi=0.05, p_stated=0.2,
        profile=make_profile(), policy=Policy(),
    )  # fmt: skip
    assert below.provenance is Provenance.INFERRED


def test_an_age_in_decades_is_inferred_from_the_exact_age() -> None:
    """Read as a restatement by every score, "Is in their thirties" from "I'm 34" is a
    conclusion: inferred, linked to the turn that gives the age. The age itself is stated."""
    link = _link([], sup_entailed=0.7, sup_inferable=0.1, sup_unsupported=0.1, sup_contradicted=0.1)
    turn = "I'm 34 and just started learning piano."
    decade, age = (
        decide(Candidate(text=claim), link, p_oi=0.01, p_stated=0.99, profile=make_profile(),
               policy=Policy(), turn_text=turn)
        for claim in ("Is in their thirties", "Is 34 years old")
    )  # fmt: skip
    assert (decade.provenance, decade.source_turn_id) == (Provenance.INFERRED, "u1")
    assert ReasonCode.NOT_FULLY_SUPPORTED in {r.code for r in decade.reasons}
    assert age.provenance is Provenance.STATED


def test_a_habit_the_user_did_not_say_is_inferred() -> None:
    """ "Watches anime regularly" from "I watched anime until 4am yesterday": the scores read a
    restatement, but the user told of one night; "regularly" unsaid makes it a conclusion. The
    habit said ("I usually watch anime late") is stated."""
    kwargs = {"p_oi": 0.05, "p_stated": 0.95, "profile": make_profile(), "policy": Policy()}
    read = {"sup_entailed": 0.8, "sup_inferable": 0.1, "sup_unsupported": 0.05,
            "sup_contradicted": 0.05}  # fmt: skip
    d = decide(Candidate(text="Watches anime regularly"), _link(["regularly"], **read), **kwargs)  # type: ignore[arg-type]
    assert (d.provenance, d.source_turn_id) == (Provenance.INFERRED, "u1")
    assert ReasonCode.NOT_FULLY_SUPPORTED in {r.code for r in d.reasons}
    d = decide(Candidate(text="Usually watches anime late"), _link([], **read), **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.STATED
    # without the support model the unsaid words are lexical only: not this rule
    plain = _link(["regularly"], **read)
    plain = plain.model_copy(update={"features": {**plain.features, "support_model": 0.0}})
    d = decide(Candidate(text="Watches anime regularly"), plain, **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.STATED


@pytest.mark.parametrize(
    ("claim", "unsaid", "habits"),
    [
        ("Watches anime regularly", ["regularly"], ["regularly"]),
        ("Often sleeps during the day", ["often", "sleeps"], ["often"]),
        ("Often sleeps during the day", ["sleeps"], []),  # "often" said, or a word like it
        ("Tends to cook at home", ["tends"], ["tends"]),
        ("Rarely sees his parents", ["rarely"], ["rarely"]),  # a frequency either way
        ("Watched anime until 4am", ["4am"], []),
        ("Do you always shop in person? I do.", ["always"], []),  # a question asserts nothing
    ],
)  # fmt: skip
def test_unsaid_habits(claim: str, unsaid: list[str], habits: list[str]) -> None:
    assert unsaid_habits(claim, unsaid) == habits


@pytest.mark.parametrize(
    ("claim", "evidence", "habits"),
    [
        ("Often watches anime", "I watched anime until 4am yesterday.", ["often"]),
        ("Often breaks out on the chin", "i break out on my chin a lot", []),
        ("Usually goes to the gym around 6am", "I only go to the gym mornings before work.", []),
        ("Usually at the gym by 6", "I'm normally at the gym by 6", []),
        ("Often plays football", "we play football every Sunday", []),
        ("Often plays football", "we play football on Sundays", []),
        # "never" is left out: it as often denies the habit ("The user's flat has always been
        # noisy like this" / "it's never been this bad"); "Rarely or never cooks" is inferred
        ("Rarely or never cooks", "I never cook, we order in", ["rarely"]),
        # a habit said of something else in the turn is not this one's
        ("Often cooks rice for the family", "I cook rice for the family. We eat out most days.",
         ["often"]),
    ],
)  # fmt: skip
def test_a_habit_said_in_other_words_is_said(claim: str, evidence: str, habits: list[str]) -> None:
    unsaid = [claim.split()[0].lower()]  # the habit word, unsaid by the aligner
    assert unsaid_habits(claim, unsaid, evidence) == habits


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


def test_word_pieces_of_a_number_read_as_the_number() -> None:
    """The encoder's pieces of "€4,000" are "€4", ",", "000": joined again, they are 4000,
    which "4k" says."""
    from mirage_guard.guard.evidence import _text as tx
    from mirage_guard.guard.evidence._support import _joined

    assert tx.numbers(_joined(["sell", "for", "€4", ",", "000"])) == {"4000"}
    assert tx.numbers(_joined(["sell", "for", "maybe", "4k"])) == {"4000"}
    assert tx.numbers(_joined(["apples", ",", "pears"])) == frozenset()


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("Does not eat pork", "I don't eat pork, never have."),
        ("Doesn't have a driver's license yet", "i dont have a license yet so ethan drives"),
        ("Never drinks coffee", "I do not drink coffee at all."),
    ],
)
def test_a_negation_is_said_by_any_negation_of_the_user(claim: str, evidence: str) -> None:
    """Polarity, not the same word: "does not" is said by "I don't", "dont", "do not"."""
    al = LexicalAligner().align_text(claim, [evidence])
    assert not {"not", "doesn't", "never"} & set(al.unsupported_words)


def test_a_negation_against_a_positive_statement_stays_unsupported() -> None:
    al = LexicalAligner().align_text("Does not eat pork", ["I eat pork every sunday."])
    assert "not" in al.unsupported_words


def test_a_negation_about_something_else_does_not_say_the_claims() -> None:
    """A "not" in another sentence of the linked turns denies something else: the claim's
    negation is said only by a negated sentence that says one of its other words."""
    positive = "I swim in the sea whenever I can, even in winter."
    elsewhere = LexicalAligner().align_text(
        "Does not swim in the sea in winter", [positive, "Honestly, not having to set an alarm."]
    )
    assert "not" in elsewhere.unsupported_words
    said = LexicalAligner().align_text(
        "Does not swim in the sea in winter", [positive, "But I don't swim when it's stormy."]
    )
    assert "not" not in said.unsupported_words


def _decided(
    words: list[str] | None = None, claim: str = "Lives in Lisbon", **features: float
) -> tuple[Provenance, set[ReasonCode]]:
    link = _link(words or [], **features)
    d = decide(
        Candidate(text=claim), link, p_oi=0.01, p_stated=0.99,
        profile=make_profile(), policy=Policy(),
    )  # fmt: skip
    return d.provenance, {r.code for r in d.reasons}


def test_a_later_turn_that_contradicts_the_claim_makes_it_stale() -> None:
    support = {"sup_entailed": 0.8, "sup_inferable": 0.1, "sup_unsupported": 0.05}
    prov, codes = _decided(sup_contradicted=0.05, sup_superseded=0.9, **support)
    assert prov is Provenance.GENERATED
    assert ReasonCode.SUPERSEDED in codes
    prov, codes = _decided(sup_contradicted=0.05, sup_superseded=0.2, **support)
    assert prov is Provenance.STATED  # a later turn that does not contradict it changes nothing


def test_a_later_correction_does_not_make_a_conclusion_stale() -> None:
    """ "Currently uses a Windows computer" is a conclusion its turn makes inferable, not what it
    says; the support model's reading of a later turn as a correction is of the stated fact, so
    the conclusion is not made stale by it (measured: 8 rows to the label, none away)."""
    concluded = {"sup_entailed": 0.05, "sup_inferable": 0.9, "sup_unsupported": 0.03}
    prov, codes = _decided(sup_contradicted=0.02, sup_superseded=0.9, **concluded)
    assert ReasonCode.SUPERSEDED not in codes
    assert prov is not Provenance.GENERATED


def test_a_claim_said_word_for_word_in_a_turn_read_as_saying_it_is_stated() -> None:
    """ "Is 23 years old" / "im 23 so insurance is gonna be mental anyway": the stated score reads
    it low inside a long chat turn; every content word said and the support model reading the
    turn as saying it make it a restatement, with its own reason. Either signal alone does not,
    and a word the user never said keeps it inferred."""

    def decided(words: list[str], **features: float) -> tuple[Provenance, set[ReasonCode]]:
        d = decide(
            Candidate(text="Is 23 years old"), _link(words, **features), p_oi=0.05,
            p_stated=0.2, profile=make_profile(), policy=Policy(),
        )  # fmt: skip
        return d.provenance, {r.code for r in d.reasons}

    said = {"sup_entailed": 0.66, "sup_inferable": 0.2, "align_unsupported_share": 0.0}
    prov, codes = decided([], **said)
    assert prov is Provenance.STATED
    assert ReasonCode.SAID_WHOLE in codes
    assert ReasonCode.STATED_SCORE not in codes
    assert decided([], **{**said, "sup_entailed": 0.3, "sup_inferable": 0.6})[0] is not (
        Provenance.STATED
    )
    assert decided(["years"], **{**said, "align_unsupported_share": 0.33})[0] is not (
        Provenance.STATED
    )
    assert decided([], **{**said, "support_model": 0.0})[0] is not Provenance.STATED


def test_a_claim_whose_only_unsaid_words_frame_it_is_said_whole() -> None:
    """ "User works as a hairdresser" / "i'm a hairdresser so i don't exactly have savings",
    "Has a son named Reuben" / "my son Reuben": the words a memory writer frames a fact with are
    unsaid and assert nothing the user did not say; a place the user named in passing ("Lives in
    Neukolln") or any other unsaid word keeps the claim off the restatement path."""

    def decided(text: str, words: list[str]) -> tuple[Provenance, set[ReasonCode]]:
        feats = {"sup_entailed": 0.9, "sup_inferable": 0.02, "align_unsupported_share": 0.5}
        d = decide(
            Candidate(text=text), _link(words, **feats), p_oi=0.05, p_stated=0.2,
            profile=make_profile(), policy=Policy(),
        )  # fmt: skip
        return d.provenance, {r.code for r in d.reasons}

    prov, codes = decided("User works as a hairdresser", ["works", "as"])
    assert prov is Provenance.STATED
    assert ReasonCode.SAID_WHOLE in codes
    assert decided("Has a son named Reuben", ["named"])[0] is Provenance.STATED
    assert decided("You're pretty extroverted", ["re"])[0] is Provenance.STATED
    assert decided("Lives in Neukolln", ["lives"])[0] is not Provenance.STATED
    assert decided("Works as a senior hairdresser", ["works", "as", "senior"])[0] is not (
        Provenance.STATED
    )


def _read_low(
    text: str, turn: str, words: list[str], **feats: float
) -> tuple[Provenance, set[ReasonCode]]:
    """The decision on a claim linked to ``turn`` that the stated score reads low (0.2) and the
    support model reads as not entailed (0.01): its provenance and reason codes."""
    link = _link(words, sup_entailed=0.01, **feats).model_copy(update={"span": turn})
    d = decide(
        Candidate(text=text), link, p_oi=0.05, p_stated=0.2, profile=make_profile(), policy=Policy()
    )
    return d.provenance, {r.code for r in d.reasons}


def test_a_relation_and_its_name_said_as_my_kind_name_is_stated() -> None:
    """ "Has a brother named Felix" / "my brother Felix took me out for dinner last night": the
    support model reads the turn as making the claim inferable and the stated score reads it
    low; "my <kind> <name>" says it, with its own reason. Another name, another kind, no "my",
    or another unsaid word keep it off the restatement path."""

    def decided(text: str, turn: str, words: list[str]) -> tuple[Provenance, set[ReasonCode]]:
        return _read_low(text, turn, words, sup_inferable=0.97, align_unsupported_share=0.33)

    turn = "my brother Felix took me out for dinner last night"
    prov, codes = decided("Has a brother named Felix", turn, ["named"])
    assert prov is Provenance.STATED
    assert ReasonCode.SAID_NAMED in codes
    family = "me, my wife Jo and our son Theo who's 7"
    claim = "Married to Jo and has a 7-year-old son named Theo"
    assert decided(claim, family, ["named"])[0] is Provenance.STATED
    assert decided("Has a brother named Tomas", turn, ["named"])[0] is not Provenance.STATED
    assert decided("Has a cousin named Felix", turn, ["named"])[0] is not Provenance.STATED
    assert decided("Has a brother named Felix", "Felix took me out", ["named"])[0] is not (
        Provenance.STATED
    )
    assert decided("Has an older brother named Felix", turn, ["named", "older"])[0] is not (
        Provenance.STATED
    )


def test_the_users_own_age_said_as_im_age_is_stated() -> None:
    """ "Is 29 years old" / "I'm 29, take home about 2,400 a month": the support model reads the
    user's own age as making the claim inferable (0.78 in the held-out set) and the stated score
    reads it low; "I'm <age>" says it, with its own reason. Another age, a duration, another
    person's age or another unsaid word keep it off the restatement path."""

    def decided(text: str, turn: str, words: list[str]) -> tuple[Provenance, set[ReasonCode]]:
        return _read_low(text, turn, words, sup_inferable=0.78, align_unsupported_share=0.0)

    turn = "I'm 29, take home about 2,400 a month after tax, and rent is 950."
    prov, codes = decided("Is 29 years old", turn, [])
    assert prov is Provenance.STATED
    assert ReasonCode.SAID_AGE in codes
    assert decided("You're 29", turn, [])[0] is Provenance.STATED
    assert decided("User is 38 and married", "i'm 38, my wife and i have a mortgage", [])[0] is (
        Provenance.STATED
    )
    assert decided("Is 31 years old", turn, [])[0] is not Provenance.STATED
    assert decided("Son Finn is 29", turn, [])[0] is not Provenance.STATED
    assert decided("Is 20 minutes away", "I'm 20 minutes away", [])[0] is not Provenance.STATED
    assert decided("Is 29 and divorced", turn, ["divorced"])[0] is not Provenance.STATED
    assert decided("Is 29 years old", "I am 29 and my sister is 31", [])[0] is Provenance.STATED
    assert decided("Is 29 years old", "29, never used anything but soap", [])[0] is not (
        Provenance.STATED
    )


def test_a_claim_the_linked_turn_contradicts_is_generated() -> None:
    """ "Budget is 200 euros" against "around 120 euros a night": the model reads a contradiction
    and a number is not said."""
    read = {"sup_entailed": 0.1, "sup_inferable": 0.05, "sup_unsupported": 0.15}
    prov, codes = _decided(["200"], sup_contradicted=0.7, **read)
    assert prov is Provenance.GENERATED
    assert ReasonCode.CONTRADICTED in codes
    # the model alone (every verbatim word said, e.g. a negation the user's words have): no
    prov, codes = _decided(["budget"], sup_contradicted=0.7, **read)
    assert ReasonCode.CONTRADICTED not in codes
    # more support than contradiction: not decided by the contradiction rule
    prov, codes = _decided(
        ["200"], sup_entailed=0.45, sup_inferable=0.05, sup_unsupported=0.0, sup_contradicted=0.5
    )
    assert ReasonCode.CONTRADICTED not in codes


def test_a_trip_there_and_back_is_no_contradiction_of_one_way() -> None:
    """ "Spends 80 minutes a day on the bus" against "My commute is 40 minutes each way by bus":
    the model read a contradiction and 80 is not said, but it is twice what one way takes (a
    sum, not another value). Another number is still contradicted."""
    from mirage_guard.guard._decision import contradicted

    bus = "My commute is 40 minutes each way by bus and the car would get it to 15."
    read = {"sup_entailed": 0.1, "sup_inferable": 0.05, "sup_unsupported": 0.15}
    link = _link(["80"], sup_contradicted=0.7, **read).model_copy(update={"span": bus})
    assert not contradicted(link)
    assert contradicted(link.model_copy(update={"unsupported_words": ["90"]}))
    assert round_trips(bus) == {"80"}
    assert round_trips("i ride it to work and back every day, about 12k each way") == {"24"}
    assert round_trips("it's 12k to work") == frozenset()


def test_without_the_support_model_no_contradiction_is_read() -> None:
    link = _link(["200"], sup_contradicted=0.9)
    link = link.model_copy(update={"features": {**link.features, "support_model": 0.0}})
    from mirage_guard.guard._decision import contradicted

    assert not contradicted(link)


class _ReadsByTurn:
    """A pair model that reads each turn as told: premise text -> class probabilities."""

    sha256 = "test"

    def __init__(self, by_premise: dict[str, list[float]]) -> None:
        self.by_premise = by_premise

    def predict_text(self, premises: Sequence[str], claims: Sequence[str]) -> np.ndarray:
        return np.asarray([self.by_premise[p] for p in premises], np.float32)


@pytest.mark.parametrize(
    ("later", "stale"),
    [("We moved to Denver last month.", True), ("Denver is lovely in spring.", False)],
)
def test_a_later_correcting_turn_that_contradicts_makes_the_claim_stale(
    later: str, stale: bool
) -> None:
    said, contra = [0.9, 0.05, 0.05, 0.0], [0.0, 0.05, 0.15, 0.8]
    support = ClaimSupport(_ReadsByTurn({"We live in Boston.": said, later: contra}), top_k=2)
    scores = np.asarray([[0.9, 0.5]], np.float32)
    (v,) = support.assess(["Lives in Boston"], ["We live in Boston.", later], scores)
    assert v.turn_index == 0
    assert (v.features["sup_superseded"] >= 0.5) is stale
    # said the other way round (the contradiction first, then the claim): current, not stale
    flipped = ClaimSupport(_ReadsByTurn({"We live in Boston.": said, later: contra}), top_k=2)
    (w,) = flipped.assess(["Lives in Boston"], [later, "We live in Boston."], scores[:, ::-1])
    assert w.features["sup_superseded"] == 0.0


@pytest.mark.parametrize(
    ("later", "stale"), [("I'm 41 actually.", False), ("I'm 42 actually.", True)]
)
def test_a_correction_that_gives_the_claims_own_value_does_not_make_it_stale(
    later: str, stale: bool
) -> None:
    """ "Is 41 years old" after "I'm 41 actually": the correction gives the claim's number, so
    however the pair model reads it, the claim is the corrected value; "I'm 42 actually" is not."""
    said, contra = [0.9, 0.05, 0.05, 0.0], [0.0, 0.05, 0.15, 0.8]
    model = _ReadsByTurn({"I'm 40 and a nurse.": said, later: contra})
    scores = np.asarray([[0.9, 0.5]], np.float32)
    (v,) = ClaimSupport(model, top_k=2).assess(
        ["Is 41 years old"], ["I'm 40 and a nurse.", later], scores
    )
    assert (v.features["sup_superseded"] >= 0.5) is stale


@pytest.mark.parametrize(
    ("claim", "parts"),
    [
        ("Lives in Lisbon and is a vegan", ["Lives in Lisbon", "is a vegan"]),
        ("User lives in Lisbon, is divorced.", ["User lives in Lisbon", "is divorced."]),
        (
            "Probably votes progressive since they live in Seattle",
            ["Probably votes progressive", "they live in Seattle"],
        ),
        ("Likes salt and pepper", ["Likes salt and pepper"]),
        ("Has lived in Berlin since 2015", ["Has lived in Berlin since 2015"]),
        ("Went to Paris and Rome", ["Went to Paris and Rome"]),
        # a noun phrase is the verb's object, not a clause: "a chalk bag" asserts nothing alone
        (
            "Probably owns climbing shoes and a chalk bag",
            ["Probably owns climbing shoes and a chalk bag"],
        ),
        (
            "Works as a nurse and volunteers at the shelter",
            ["Works as a nurse", "volunteers at the shelter"],
        ),
    ],
)
def test_a_compound_claim_is_split_into_the_parts_it_asserts(claim: str, parts: list[str]) -> None:
    from mirage_guard.guard.evidence._support import claim_parts

    assert claim_parts(claim) == parts


def test_a_compound_claim_is_as_strong_as_its_least_supported_part() -> None:
    said, unsaid = [0.9, 0.05, 0.05, 0.0], [0.02, 0.03, 0.9, 0.05]

    class _ByClaim(_ReadsByTurn):
        def predict_text(self, premises: Sequence[str], claims: Sequence[str]) -> np.ndarray:
            return np.asarray([self.by_premise[c] for c in claims], np.float32)

    model = _ByClaim({"Lives in Lisbon": said, "is a vegan": unsaid})
    support = ClaimSupport(model, top_k=1)
    (v,) = support.assess(
        ["Lives in Lisbon and is a vegan"], ["I live in Lisbon."], np.ones((1, 1), np.float32)
    )
    assert v.features["sup_unsupported"] == pytest.approx(0.9)
    (w,) = support.assess(["Lives in Lisbon"], ["I live in Lisbon."], np.ones((1, 1), np.float32))
    assert w.features["sup_entailed"] == pytest.approx(0.9)


def test_a_group_attribute_from_evidence_about_something_else_is_generated() -> None:
    """ "Probably votes progressive" from "I'm a software engineer in Seattle": a group prior."""
    from mirage_guard.guard.evidence import KINDS

    kinds = {f"kind_{k}": 0.1 for k in KINDS}
    read = {"sup_entailed": 0.1, "sup_inferable": 0.4, "sup_unsupported": 0.4}
    votes = "Probably votes progressive"
    prov, codes = _decided(
        claim=votes, sup_contradicted=0.1, kind_agreement=0.05,
        **{**kinds, "kind_politics": 0.8}, **read,
    )  # fmt: skip
    assert prov is Provenance.GENERATED
    assert ReasonCode.GROUP_ATTRIBUTE in codes
    # evidence about the same kind ("I volunteer for the Greens"): not this rule
    prov, codes = _decided(
        claim=votes, sup_contradicted=0.1, kind_agreement=0.8,
        **{**kinds, "kind_politics": 0.8}, **read,
    )  # fmt: skip
    assert ReasonCode.GROUP_ATTRIBUTE not in codes
    # another kind of attribute (a hobby) from other evidence: an inference, not this rule
    prov, codes = _decided(
        claim="Probably plays tennis", sup_contradicted=0.1, kind_agreement=0.05,
        **{**kinds, "kind_hobby": 0.8}, **read,
    )  # fmt: skip
    assert ReasonCode.GROUP_ATTRIBUTE not in codes
    # the kind prototypes read it as religion, but the claim names no religion or politics
    prov, codes = _decided(
        claim="Is vegan", sup_contradicted=0.1, kind_agreement=0.05,
        **{**kinds, "kind_religion": 0.8}, **read,
    )  # fmt: skip
    assert ReasonCode.GROUP_ATTRIBUTE not in codes


def test_group_words() -> None:
    from mirage_guard.guard.evidence import group_words

    assert group_words("Goes to Mass on Sundays") == ["mass"]
    assert group_words("Probably votes Labour") == ["votes", "labour"]
    assert group_words("Roller derby practice is Tuesday") == []


@pytest.mark.parametrize(
    ("text", "traits"),
    [
        ("Is organized and detail-oriented", ["organized", "detail-oriented"]),
        ("You're careful and risk-averse with money", ["careful", "risk-averse"]),
        ("Drives cautiously and under the limit", ["cautiously"]),
        ("Stays calm in stressful situations", ["calm"]),
        ("Is a patient person", ["patient"]),
        # an aptitude read into a job or a course is a trait too
        ("Is a creative person with an eye for design", ["creative"]),
        ("Is handy and practical", ["handy"]),
        # before a noun the word describes the thing, not the person
        ("Works in a creative agency", []),
        ("Plays competitive chess", []),
        ("Has an easygoing landlord", []),
        ("Is an independent contractor", []),
        ("Has experience caring for teenagers", []),
        # a state a situation brings is not a trait
        ("Is stressed about passing the bar", []),
    ],
)
def test_trait_words_name_a_disposition_of_the_person(text: str, traits: list[str]) -> None:
    assert trait_words(text) == traits


def _trait_decision(claim: str, turn: str, **features: float) -> Decision:
    read = {"sup_entailed": 0.05, "sup_inferable": 0.6, "sup_unsupported": 0.3}
    link = _link([], sup_contradicted=0.05, **{**read, **features})
    return decide(
        Candidate(text=claim), link, p_oi=0.2, p_stated=0.3, profile=make_profile(),
        policy=Policy(), turn_text=turn,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("claim", "unsaid", "glued"),
    [
        ("Planning a dinosaur party with a bouncy castle", ["bouncy", "castle"],
         ["with a bouncy castle"]),
        ("Nearly drowned at 8 while fishing with his dad", ["fishing", "dad"],
         ["while fishing", "with his dad"]),
        # a phrase with a word the user said is not glued on
        ("Walks her dogs along the river Lagan", ["river"], []),
        ("Walks her dogs along the river", [], []),
        # the phrase ends at a comma or "and"
        ("Lives with her sister, and works at night", ["sister"], ["with her sister"]),
        # other prepositions are not read ("at a warehouse", "in Galway") ...
        ("Works at a warehouse", ["warehouse"], []),
        ("Works night shifts in Galway", ["galway"], []),
        # ... but for a time or an occasion the user never gave
        ("Works night shifts at the hospital on weekends", ["weekends"], ["on weekends"]),
        ("Got the necklace for her birthday", ["birthday"], ["for her birthday"]),
        ("Goes skiing every winter in the Alps", ["winter", "alps"],
         ["every winter"]),
        ("Works night shifts on weekends", [], []),  # said
        ("Works at a cafe on weekends and at night", ["weekends"], ["on weekends"]),
        # "before" as "after" does
        ("Goes bouldering three times a week before work", ["work"], ["before work"]),
        ("Walks the dog before work", [], []),
        # "from" a source, "as" a role, "every" a frequency
        ("Adopted a cat named Mochi from a shelter", ["shelter"], ["from a shelter"]),
        ("Works at a dental office as a hygienist", ["hygienist"], ["as a hygienist"]),
        ("Runs a marathon every year", ["year"], ["every year"]),
        # ... but not "as" comparing, or opening the claim
        ("Is about the same height as the friend", ["friend"], []),
        ("As an apprentice, did the wiring", ["apprentice"], []),
    ],
)  # fmt: skip
def test_glued_phrases(claim: str, unsaid: list[str], glued: list[str]) -> None:
    assert glued_phrases(claim, unsaid) == glued


@pytest.mark.parametrize(
    ("claim", "items"),
    [
        ("Has a cat named Pierogi and a dog", ["a dog"]),
        ("Is allergic to eggs and milk since birth", ["milk"]),
        ("Cooks pasta, curries and stir-fries", ["curries", "stir-fries"]),
        ("Drinks tea or coffee in the morning", ["coffee"]),
        # predicates are not items (``claim_predicates`` reads them)
        ("Lives in Lisbon and is a vegan", []),
        ("Lives in Lisbon, works from home", []),
        ("Loves hiking", []),
        ("and a dog", []),
        # clauses, appositions and a verb with its object are not items
        ("Your stall is called Crumb & Co and you run it on your own", []),
        ("Training for her first 10K, race day in March", []),
        ("Finds apartments at an agency, a second career after the post office", []),
        ("Is 46 and training for a first 10k in October", []),
        ("Enjoys skiing, especially in winter", []),
        ("Helps Mrs Alvarez with her Medicare plan and her taxes", ["her taxes"]),
        ("Eats meat, wine, and other junk", ["wine", "other junk"]),
        ("Likes hiking and swimming", ["swimming"]),
        ("Has been trying for a baby for a year and a half", []),
        ("Has twins who are 5 and currently go to daycare", []),
        ("What is cheerleading, or do you know it as cheer?", []),
    ],
)  # fmt: skip
def test_list_items(claim: str, items: list[str]) -> None:
    assert list_items(claim) == items


@pytest.mark.parametrize(
    ("claim", "unsaid", "glued"),
    [
        ("Has a cat named Pierogi and a dog", ["dog"], ["a dog"]),
        ("Younger son has asthma and a peanut allergy", ["younger", "peanut", "allergy"],
         ["a peanut allergy"]),
        # one word of the item said: not glued
        ("Younger son has asthma and a peanut allergy", ["younger", "peanut"], []),
        # a hyphenated item is unsaid when each of its parts is, as the aligner reads it
        ("Cooks pasta, curries and stir-fries", ["stir", "fries"], ["stir-fries"]),
        ("Cooks pasta, curries and stir-fries", ["stir"], []),
        # the first item is what the user said; only added ones are read
        ("Has a dog and a cat", ["dog"], []),
        ("Has a cat and a dog", [], []),
    ],
)  # fmt: skip
def test_glued_items(claim: str, unsaid: list[str], glued: list[str]) -> None:
    assert glued_items(claim, unsaid) == glued


def _tokens(pieces: Sequence[str], vectors: dict[str, Sequence[float]]) -> TokenText:
    rows = [[0.0, 0.0, 0.0, 1.0], *(list(vectors[p]) for p in pieces), [0.0, 0.0, 0.0, 1.0]]
    return TokenText(tuple(pieces), np.asarray(rows, np.float16))


def test_the_aligner_reads_a_second_item_off_the_first_as_doubled() -> None:
    """ "milk" nearest to the "eggs" the claim's "eggs" says: doubled, though above the threshold
    (a co-hyponym reads like a paraphrase); "kids" nearest to "boys", which no claim word says,
    is a paraphrase, not doubled."""
    v = {"allergic": (1, 0, 0, 0), "to": (0, 0, 0, 1), "eggs": (0, 1, 0, 0),
         "milk": (0, 0.9, 0.3, 0), "and": (0, 0, 0, 1), "husband": (1, 0, 0, 0),
         "boys": (0, 1, 0, 0), "kids": (0, 0.9, 0.3, 0)}  # fmt: skip
    aligner = TokenAligner()
    al = aligner.align(_tokens(["allergic", "to", "eggs", "and", "milk"], v),
                       [_tokens(["allergic", "to", "eggs"], v)])  # fmt: skip
    assert (al.unsupported_words, al.doubled_words) == ((), ("milk",))
    al = aligner.align(_tokens(["husband", "and", "kids"], v),
                       [_tokens(["husband", "and", "boys"], v)])  # fmt: skip
    assert (al.unsupported_words, al.doubled_words) == ((), ())


def test_a_doubled_list_item_makes_a_restatement_generated() -> None:
    """The linker's ``doubled_words`` count as unsaid for a list's added items, and name them."""
    link = _link([], sup_entailed=0.9, sup_inferable=0.05, sup_unsupported=0.03,
                 sup_contradicted=0.02).model_copy(update={"doubled_words": ["milk"]})  # fmt: skip
    kwargs = {"p_oi": 0.05, "p_stated": 0.95, "profile": make_profile(), "policy": Policy()}
    d = decide(Candidate(text="Son is allergic to eggs and milk"), link, **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.GENERATED
    (r,) = [r for r in d.reasons if r.code is ReasonCode.GLUED_DETAIL]
    assert r.params == {"turn_id": "u1", "words": ["milk"]}
    # without the doubled word the claim is the restatement it reads as
    d = decide(Candidate(text="Son is allergic to eggs and milk"), _link(
        [], sup_entailed=0.9, sup_inferable=0.05, sup_unsupported=0.03, sup_contradicted=0.02),
        **kwargs)  # type: ignore[arg-type]  # fmt: skip
    assert d.provenance is Provenance.STATED


def test_a_restatement_with_a_glued_detail_is_generated_and_names_the_phrase() -> None:
    """The scores read it as stated; a phrase none of whose words the user said is glued on."""
    link = _link(["bouncy", "castle"], sup_entailed=0.9, sup_inferable=0.05,
                 sup_unsupported=0.03, sup_contradicted=0.02)  # fmt: skip
    kwargs = {"p_oi": 0.05, "p_stated": 0.95, "profile": make_profile(), "policy": Policy()}
    d = decide(Candidate(text="Planning a dinosaur party with a bouncy castle"), link, **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.GENERATED
    (r,) = [r for r in d.reasons if r.code is ReasonCode.GLUED_DETAIL]
    assert r.params == {"turn_id": "u1", "words": ["with a bouncy castle"]}
    # an inference's conclusion is unsaid by nature: not this rule
    d = decide(Candidate(text="Planning a dinosaur party with a bouncy castle"), link,
               **{**kwargs, "p_stated": 0.1})  # type: ignore[arg-type]  # fmt: skip
    assert d.provenance is Provenance.INFERRED
    # without the claim-support model (no token alignment): not this rule
    plain = link.model_copy(update={"features": {**link.features, "support_model": 0.0}})
    d = decide(Candidate(text="Planning a dinosaur party with a bouncy castle"), plain, **kwargs)  # type: ignore[arg-type]
    assert ReasonCode.GLUED_DETAIL not in {r.code for r in d.reasons}


def test_how_often_concluded_from_a_habit_said_in_other_words_is_inferred() -> None:
    """ "Drinks diet soda every day" / "I drink a LOT of diet soda though": "every day" is
    unsaid, but the turn says a habit of the same thing in other words, so it is a conclusion
    (inferred), not a detail glued on (generated) nor a restatement (stated). Against a turn that
    says one occasion it is still glued on."""
    link = _link(["every", "day"], sup_entailed=0.9, sup_inferable=0.05,
                 sup_unsupported=0.03, sup_contradicted=0.02)  # fmt: skip
    kwargs = {"p_oi": 0.05, "p_stated": 0.95, "profile": make_profile(), "policy": Policy()}
    claim = Candidate(text="Drinks diet soda every day")
    habit = "I drink a LOT of diet soda though."
    d = decide(claim, link, turn_text=habit, **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.INFERRED
    assert ReasonCode.NOT_FULLY_SUPPORTED in {r.code for r in d.reasons}
    once = "I had a diet soda with lunch."
    d = decide(claim, link, turn_text=once, **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.GENERATED
    (r,) = [r for r in d.reasons if r.code is ReasonCode.GLUED_DETAIL]
    assert r.params["words"] == ["every day"]
    # a glued phrase that is not a frequency stays glued on, habit or not
    glued = _link(["bouncy", "castle"], sup_entailed=0.9, sup_inferable=0.05,
                  sup_unsupported=0.03, sup_contradicted=0.02)  # fmt: skip
    party = Candidate(text="Throws a party with a bouncy castle")
    d = decide(party, glued, turn_text="I throw a party every year.", **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.GENERATED


def test_a_compound_claim_with_an_unrelated_unsaid_part_is_generated() -> None:
    """ "User lives in Lisbon and is a vegan" after "I live in Lisbon.": the scores read the
    first part; the second is near no user sentence (the linker's ``unrelated_parts``) and none
    of its own words is said, so the claim is as weak as that part."""
    claim = "User lives in Lisbon and is a vegan."
    read = {"sup_entailed": 0.9, "sup_inferable": 0.05, "sup_unsupported": 0.03,
            "sup_contradicted": 0.02}  # fmt: skip
    kwargs = {"p_oi": 0.05, "p_stated": 0.95, "profile": make_profile(), "policy": Policy()}
    glued = _link(["vegan"], **read).model_copy(update={"unrelated_parts": ["User is a vegan."]})
    d = decide(Candidate(text=claim), glued, **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.GENERATED
    (r,) = [r for r in d.reasons if r.code is ReasonCode.GLUED_DETAIL]
    assert r.params == {"turn_id": "u1", "words": ["User is a vegan."]}
    # the user said "vegan" in some turn: the part is not unsaid, the scores decide
    said = glued.model_copy(update={"unsupported_words": []})
    assert decide(Candidate(text=claim), said, **kwargs).provenance is Provenance.STATED  # type: ignore[arg-type]
    # a part near a user sentence by meaning (not in unrelated_parts): not this rule
    near = glued.model_copy(update={"unrelated_parts": []})
    assert decide(Candidate(text=claim), near, **kwargs).provenance is Provenance.STATED  # type: ignore[arg-type]
    # the subject's words are not the part's own: "User" and "Lisbon" unsaid do not make it glued
    subject = _link(["user", "lisbon"], **read).model_copy(
        update={"unrelated_parts": ["User is a vegan."]}
    )
    assert decide(Candidate(text=claim), subject, **kwargs).provenance is Provenance.STATED  # type: ignore[arg-type]


def test_a_personality_trait_from_evidence_about_something_else_is_generated() -> None:
    """ "Is organized and detail-oriented" from "Got a rack and plates in the garage from a
    neighbour": the taxonomy's stereotype; the reason names the trait words."""
    turn = "Got a rack and a bunch of plates in the garage from a neighbour."
    d = _trait_decision("Is organized and detail-oriented", turn, kind_agreement=0.1)
    assert d.provenance is Provenance.GENERATED
    (r,) = [r for r in d.reasons if r.code is ReasonCode.PERSONALITY_TRAIT]
    assert r.params == {"turn_id": "u1", "words": ["organized", "detail-oriented"]}
    # the turn says the trait, wherever the word stands ("I'm a patient man"): not this rule
    d = _trait_decision("Is patient", "I'm a patient man, but this queue...", kind_agreement=0.1)
    assert ReasonCode.PERSONALITY_TRAIT not in {r.code for r in d.reasons}
    # the turn is about the same kind of attribute ("I hate being late"): an inference
    d = _trait_decision("Is punctual", "I hate being late to anything.", kind_agreement=0.7)
    assert d.provenance is Provenance.INFERRED
    # ... unless none of the claim's words is in it: the kind prototypes read "I'm on the 7:34
    # again" as about the same thing as "Is strictly punctual and hates being late"
    d = _trait_decision(
        "Is strictly punctual and hates being late", "I'm on the 7:34 again.",
        kind_agreement=0.7, align_unsupported_share=1.0,
    )  # fmt: skip
    assert d.provenance is Provenance.GENERATED
    assert ReasonCode.PERSONALITY_TRAIT in {r.code for r in d.reasons}
    # the support model reads the turn as saying it ("I'm never late"): not this rule
    d = _trait_decision("Is punctual", "I'm never late.", kind_agreement=0.1, sup_entailed=0.8)
    assert ReasonCode.PERSONALITY_TRAIT not in {r.code for r in d.reasons}
    # a claim without a trait word is left to the scores
    d = _trait_decision("Keeps gym equipment in the garage", turn, kind_agreement=0.1)
    assert d.provenance is Provenance.INFERRED


@pytest.mark.parametrize(
    ("claim", "unsaid", "activity"),
    [
        # a taste or a routine whose activity the user's turns never name: made up
        ("Enjoys fishing on his days off", ["fishing"], ["fishing"]),
        ("User enjoys gardening on weekends", ["gardening"], ["gardening"]),
        ("Takes a siesta after lunch most days", ["takes", "siesta"], ["takes", "siesta"]),
        ("Does the crossword every morning", ["crossword"], ["crossword"]),
        ("Loves weekend brunch and flat whites", ["brunch", "flat", "whites"],
         ["brunch", "flat", "whites"]),
        ("Goes to indie gigs at the weekend", ["goes", "indie", "gigs"],
         ["goes", "indie", "gigs"]),
        # one of its words said: left to the scores ("Watches anime regularly" is a habit of
        # what the user said, unsaid_habits' case)
        ("Enjoys fishing on his days off", [], []),
        ("Takes a siesta after lunch most days", ["siesta"], []),
        ("Watches anime regularly", ["regularly"], []),
        # no taste, no routine: not a pastime
        ("Went fishing with his dad", ["fishing", "dad"], []),
        # a state or a possession, not an activity
        ("Is busy most weekends in the summer", ["busy", "summer"], []),
        ("You're up before dawn most days", ["dawn"], []),
        ("Owns a bike and uses it daily", ["owns", "bike", "uses"], []),
        # "nights" is an occasion as often as a routine ("nights out", "nights in hotels")
        ("Drinks alcohol on nights out", ["drinks", "alcohol"], []),
        # "mostly" frames it; a hyphenated word is unsaid when its parts are
        ("Listens mostly to hip-hop in his free time", ["listens", "hip", "hop"],
         ["listens", "hip-hop"]),
        # a share of the household's work is a routine too; a share of a time is not
        ("Does most of the cooking and housework", ["cooking", "housework"],
         ["cooking", "housework"]),
        ("Manages all the household finances", ["manages", "household", "finances"],
         ["manages", "household", "finances"]),
        ("Stands for most of her working day", ["stands", "working"], []),
        ("Travels most of the year", ["travels"], []),
        # a number is a fact's detail, not a taste's
        ("Cycles to work every day, about 12 km each way", ["cycles", "12", "km"], []),
        # a question is not a claim about the user
        ("Enjoys fishing on weekends?", ["fishing"], []),
        # a taste glued onto a place or a team the user named: its own words, two or more
        ("Enjoys watching Leeds United games", ["enjoys", "watching", "games"],
         ["watching", "games"]),
        ("Probably follows Welsh rugby closely", ["follows", "rugby", "closely"],
         ["rugby", "closely"]),
        ("enjoys watching Leeds United games", ["watching", "games"], ["watching", "games"]),
        # ... not one word of its own, not one of them said, not a routine without a taste,
        # not a relative's
        ("Loves Leeds United", ["loves", "united"], []),
        ("Plays Valorant regularly", ["plays"], []),
        ("Enjoys watching Leeds United games", ["watching"], []),
        ("Volunteers at the St. Bernadette's food pantry on Tuesdays",
         ["volunteers", "food", "pantry"], []),
        ("Son Noah follows a gluten-free diet", ["son", "gluten", "free", "diet"], []),
    ],
)  # fmt: skip
def test_a_pastime_is_the_activity_of_a_taste_or_a_routine(
    claim: str, unsaid: list[str], activity: list[str]
) -> None:
    assert unsaid_pastime(claim, unsaid) == activity


def test_a_taste_or_routine_whose_activity_no_turn_says_is_generated() -> None:
    """ "Enjoys fishing on his days off" from "i drive a forklift at the depot, 6 till 2": a
    pastime read into a job, the taxonomy's stereotype; the support model reads it inferable
    and the scores let it through as an inference. The reason names the activity."""
    read = {"sup_entailed": 0.05, "sup_inferable": 0.6, "sup_unsupported": 0.3,
            "sup_contradicted": 0.05}  # fmt: skip
    kwargs = {"p_oi": 0.3, "p_stated": 0.1, "profile": make_profile(), "policy": Policy()}
    claim = Candidate(text="Enjoys fishing on his days off")
    d = decide(claim, _link(["fishing"], **read), **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.GENERATED
    (r,) = [r for r in d.reasons if r.code is ReasonCode.UNSAID_PASTIME]
    assert r.params == {"turn_id": "u1", "words": ["fishing"]}
    # the user named the activity in the turns the claim was read against: an inference
    d = decide(claim, _link([], **read), **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.INFERRED
    # the support model reading a turn that has none of the activity's words as saying it is
    # its error ("Goes to indie gigs at the weekend" / "the studio is dog friendly!!": 0.93)
    said = {**read, "sup_entailed": 0.93, "sup_inferable": 0.01}
    d = decide(claim, _link(["fishing"], **said), **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.GENERATED
    assert ReasonCode.UNSAID_PASTIME in {r.code for r in d.reasons}
    # no claim-level signal (an embedder without token vectors): its words are not known
    d = decide(claim, _link(["fishing"], **read, support_model=0.0), **kwargs)  # type: ignore[arg-type]
    assert ReasonCode.UNSAID_PASTIME not in {r.code for r in d.reasons}


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        ("Parents live 4 hours away by train", "My parents live 2 hours away by train.",
         [("2", "4")]),
        ("Returns to work on Wednesday", "I go back to work on monday.",
         [("monday", "wednesday")]),
        ("Trains jiu-jitsu four nights a week", "I train jiu-jitsu 6 nights a week.",
         [("6", "4")]),
        # the same value in words and digits, or said too: nothing changed
        ("Trains 4 nights a week", "I train four nights a week.", []),
        ("Works from 9 to 5", "I work 9 to 5 most days.", []),
        # other numbers of another thing: not a changed value
        ("Has two kids aged 5 and 7", "my kids are 5 and 7", []),
        ("Pays 900 a month for a two-bed flat", "It's 900 a month. I'm 34.", []),
        # "4k" says 4000; "2k" does not say 1500
        ("Will sell the car for about €4,000", "I'll sell the car for maybe 4k.", []),
        ("Budget is 2k a month", "my budget is 1.5k a month", [("1500", "2000")]),
        ("Sold the house for 1500000 euros", "we sold the house for 1500k", []),
        # thousands commas: "1,500,000" is one number, so 1,500 is not what was said
        ("Paid 1,500 for the flat", "I paid 1,500,000 for the flat", [("1500000", "1500")]),
        ("Paid 1,500,500 for the flat", "I paid 1,500,000 for the flat",
         [("1500000", "1500500")]),
        ("Sold the house for 1500000", "we sold the house for 1,500,000", []),
        # "one" as a pronoun is no count ("one of the greatest", "the one in Memphis")
        ("Was one of the greatest singers", "singer, born January 8, 1935", []),
        ("Recorded the one in Memphis at 19", "recorded 24 songs in Memphis at 19", []),
        ("Has one cat at home", "I have two cats at home", [("2", "1")]),
        # one day (or month) in each, other words around them: the same thing, another day
        ("Getting tacos with Theo on Tuesday", "we're getting tacos thursday, is it weird",
         [("thursday", "tuesday")]),
        ("Moved to Berlin in June", "my landlord in Berlin... I moved here from Porto in august",
         [("august", "june")]),
        # ... but not where the turn gives two days and neither is about the claim's thing
        ("Has a dentist appointment on Tuesday", "I'm free monday and thursday", []),
        # a rank in words ("2nd" in digits is the number 2)
        ("This is your second baby", "First baby!", [("1st", "2nd")]),
        ("Plays first violin in the band", "got into the band!! second violin lol",
         [("2nd", "1st")]),
        ("Came second in the race", "came 2nd in the race", []),
        ("At first disliked running", "at first I hated running", []),
        # a word of a closed class swapped for another of the same class
        ("Has a cat named Pepper", "my dog Pepper is 3", [("dog", "cat")]),
        ("Prefers red wine", "I always order white wine", [("white", "red")]),
        ("Runs in the evenings before work", "I run in the mornings before work",
         [("morning", "evening")]),
        ("Goes skiing every winter", "we go skiing every summer", [("summer", "winter")]),
        # "day" is a part of the day only before "shift": "every day" is no value
        ("Works day shifts at the hospital", "i switched to a night shift at the hospital",
         [("night", "day")]),
        ("Works night shifts at the hospital", "I work night shifts, every day is a mess", []),
        ("Plays piano in a band", "I play guitar in a band", [("guitar", "piano")]),
        ("Hurt his knee playing pickup soccer", "messed up my knee at pickup basketball",
         [("basketball", "soccer")]),
        # both said, or a language (a nationality says one): nothing changed
        ("Has a cat and a dog", "my dog hates the cat", []),
        ("Speaks Portuguese at home", "I'm Brazilian, we speak English at home", []),
        # relatives: another relative about the same thing; a synonym or a plural says the same
        ("Stayed with his sister in Gliwice", "we stay with my brother in Gliwice",
         [("brother", "sister")]),
        # another family's relative is not another value of the user's
        ("Son Finn is in high school", "Finn's with his dad that weekend so it'll just be me", []),
        ("Lives with his partner Hannah and their daughter",
         "hannah's sister's 40th, there was prosecco, i'm only human", []),
        ("Is fixing up his late uncle's Peugeot", "I started fixing my late father's Peugeot",
         [("father", "uncle")]),
        ("Got the necklace from her grandfather", "I got this necklace from my grandma",
         [("grandmother", "grandfather")]),
        # ... further apart than the context words reach, in the sentence that says the rest
        ("Got the necklace from grandfather",
         "This necklace was a gift from my grandma, I wear it every day.",
         [("grandmother", "grandfather")]),
        ("Got the necklace from grandfather",
         "This necklace was a gift from my grandma to my mum, years ago.", []),  # two: which?
        ("Is selling his mum's house in Clontarf",
         "My sister is starting a new job. We're selling the house in Clontarf.", []),
        ("Received a necklace from grandma", "This necklace was a gift from my gran.", []),
        # ... only one whose it is as the claim's is, and that owns something when it does
        ("Dog is a six-year-old Staffie",
         "he's a 6 year old staffie, my flatmate's cat bosses him around", []),
        ("Is selling his mum's house", "Her house is in Clontarf. My sister and I will sell it.",
         []),
        ("Dog will stay with Camila's sister on the trip", "her mom has the dog on the trip.",
         [("mother", "sister")]),
        ("Visits her grandma on Sundays", "I visit my gran on sundays", []),
        ("Lives with mum", "I live with my mother", []),
        ("Has three brothers", "I have three sisters", [("sister", "brother")]),
        # a chain names a relative by way of another: nothing to compare
        ("Aunt lives in Leeds", "my mum's sister lives in Leeds", []),
        # a relative about something else, or a general word ("parents"): nothing changed
        ("Sister is a nurse in Leeds", "my brother moved to Bath", []),
        ("Lives with her mother", "I live with my parents", []),
        # a side of the body, only before a body part ("I left work" is no side)
        ("Had pain in her right knee", "A bit of IT band pain in my left knee",
         [("left", "right")]),
        ("Left work early", "I left work early, my right hand hurt", []),
        # an age in decades against the age the user gives
        ("You're in your mid-thirties", "I'm 41 actually.", [("41", "mid-thirties")]),
        ("User is in their 40s", "I'm 54 and thinking about a bootcamp", [("54", "40s")]),
        ("Is in their mid-fifties", "I'm 54 and thinking about a bootcamp", []),
        ("Is in her early thirties", "I just turned 34", []),  # an edge is in both parts
        ("Is in his forties or older", "I'm 38", []),  # a bound, not one decade
        ("Is in her late twenties", "I'm 20 minutes away", []),  # not an age
        ("Is in her late twenties", "my sister is 35", []),  # not the speaker's age
        # an exact age against the one age the user gives
        ("Is 37 years old", "Hi, I'm Chidi. I'm 36 and I work as a nurse in Lagos.",
         [("36", "37")]),
        ("Is 36 years old", "I'm 36 and I work as a nurse in Lagos.", []),
        ("Is 37", "I'm 36, I think, or I just turned 37", []),  # two ages: not read
        ("Is 37 years old", "my brother is 36", []),  # not the speaker's age
        # a part of the week and a meal are closed classes too
        ("Goes to the gym on weekends", "I go to the gym on weekday mornings before work.",
         [("weekday", "weekend")]),
        ("Has Sunday lunch with family", "We always have dinner as a family on Sundays.",
         [("dinner", "lunch")]),
        ("Has Sunday dinner with family", "We always have dinner as a family on Sundays.", []),
        # ... and so are a field of study, an industry, a school's level, a vehicle and a game
        ("Plans to study medicine next year", "saving up to go back to uni to study nursing",
         [("nursing", "medicine")]),
        ("Is a project manager at a software firm", "I'm a project manager at a construction firm",
         [("construction", "software")]),
        ("Teaches secondary school", "I'm a primary school teacher in Cardiff",
         [("primary", "secondary")]),
        ("Husband is a bus driver", "my husband drives a cab so he can't do school runs",
         [("taxi", "bus")]),
        ("Beat him at dominoes", "she beat me at spades and I was done for",
         [("spades", "dominoes")]),
        ("Eats chicken and fish", "I eat chicken and fish at home", []),
        # the words around a value end with its sentence: the son is not near Mia's 11
        ("Daughter Mia is 11", "She's 11. My son Leo is 8 and obsessed with football.", []),
        # the other end of one tie, and "12k" of a distance, are the same value said otherwise
        ("Kasia has a baby niece named Zosia, her brother Tomek's daughter",
         "My brother Tomek has now baby, small girl, her name is Zosia. I am aunt first time!",
         []),
        ("Visits her sister every day", "I visit my aunt every day", [("aunt", "sister")]),
        ("Cycles to work, about 12 km each way", "i ride it to work, about 12k each way", []),
        ("Ran 10 miles on Sunday", "ran a 10k on sunday", [("10000", "10")]),
        # a number said in several words is one number; "Apt" is "apartment"
        ("Is owed a $1,200 deposit by her landlord", "my landlord has my deposit its twelve "
         "hundred", []),
        ("Sold six bikes for $1,240", "six bikes sold twelve hundred forty dollars total", []),
        ("Has a Civic with about 112,000 miles", "the civic is at like a hundred and twelve "
         "thousand miles", []),
        ("Was offered 74k at the new firm", "the new firm offered 74 thousand", []),
        ("Was offered 80k at the new firm", "the new firm offered 74 thousand",
         [("74000", "80000")]),
        ("Lives at 42 Orchard Row, Apt 3B", "We moved to 42 Orchard Row, Apartment 3B.", []),
        # a job against another job of the same person; a job the turn says too
        ("Wife Ngozi is a nurse", "My wife Ngozi is a teacher and we have a daughter.",
         [("teacher", "nurse")]),
        ("Works as a nurse", "I'm a nurse and my husband is a teacher.", []),
        # a claim that is only its class's word, against the one value the turn gives; not
        # when the claim denies it or the turn gives two
        ("Is vegan", "I've been a vegetarian for ten years.", [("vegetarian", "vegan")]),
        ("Is a nurse", "I work as a barista at a cafe in Bristol.", [("barista", "nurse")]),
        ("Doesn't own a car", "i dont drive, i take the bus everywhere", []),
        ("Is vegan", "my sister is vegan and I'm vegetarian", []),
        ("Is vegan", "I'm a pescatarian, my partner is vegetarian", []),
        # another person's age, though the number is said of something else
        ("Son Leo is 11", "She's 11. My son Leo is 8 and obsessed with football.",
         [("aged 8", "aged 11")]),
        ("Has a 3-year-old child", "3 days now, no hot water. i have a 2 yr old so its a nightmare",
         [("aged 2", "aged 3")]),
        ("Daughter Ada is 4", "we have a daughter, Ada, who is 4.", []),
        ("Has a daughter aged 11", "with my daughter, she's 11 and faster than me uphill", []),
        ("Has a 6-year-old son", "he's the 9 year old actually, the 6 year old eats anything", []),
        ("Son Leo is 9", "Leo was 8 when we moved and he's 9 now", []),
        ("Has a 4-year-old daughter", "it's 10 now, we leave at 4", []),
        # a dog's breed, and a greyhound as a dog against another pet of the same name
        ("Has a whippet named Bramble", "I've got an elderly greyhound called Bramble",
         [("greyhound", "whippet")]),
        ("Has a cat named Bramble", "I've got an elderly greyhound called Bramble",
         [("dog", "cat")]),
        ("Has a dog named Bramble", "I've got an elderly greyhound called Bramble", []),
        # "may" is the month after "in", "till", ...; the modal elsewhere
        ("Car loan ends in May", "car loan 180/mo till march. no cc debt", [("march", "may")]),
        ("Car loan ends in March", "car loan 180/mo till may", [("may", "march")]),
        ("May need surgery", "I may need surgery in March", []),
        # a trip there and back is twice one way, not another value
        ("Spends 80 minutes a day on the bus", "My commute is 40 minutes each way by bus", []),
        ("Spends 90 minutes a day on the bus", "My commute is 40 minutes each way by bus",
         [("40", "90")]),
        # one word for the same people right after the number
        ("Has two children", "and actually it's 3 kids I should've said", [("3", "2")]),
        ("Has five grandchildren", "so that's six grandkids now", [("6", "5")]),
        ("Has children with two different mothers", "actually it's 3 kids", []),
    ],
)  # fmt: skip
def test_changed_values(claim: str, evidence: str, expected: list[tuple[str, str]]) -> None:
    assert changed_values(claim, evidence) == expected


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        ("Grew up in social housing in Bristol", "I grew up in social housing in Swindon.",
         [("swindon", "bristol")]),
        ("Cat Pepper needs a sedative", "The vet said Miso might need a sedative.",
         [("miso", "pepper")]),
        # the same name, a name said in other words, a name with nothing else in common
        ("Partner Marta is vegetarian", "marta is vegetarian btw", []),
        ("Lives in Leeds with Sam", "we live in Leeds with Sam and Priya", []),
        ("Has a sister in Austin", "My sister Joy is in Austin.", []),
        ("Flies to Lisbon in May", "We fly out on a Friday, Ryanair.", []),
        # a street's type in its short form is the same street; another street is another name
        ("Commutes by tram along Sydney Road", "the tram's down on Sydney Rd again", []),
        ("Lives on Sydney Road", "I live on Lygon Street", [("lygon", "sydney")]),
    ],
)  # fmt: skip
def test_swapped_names(claim: str, evidence: str, expected: list[tuple[str, str]]) -> None:
    assert swapped_names(claim, evidence) == expected


def test_the_users_own_name_is_never_a_swapped_name() -> None:
    """ "Hi, this is Elena from next door (the yellow house)" said by Elena says nothing against
    "Lives in the yellow house next door to Jamal"; another name would."""
    turn = "Hi, this is Elena from next door (the yellow house)."
    claim = "Lives in the yellow house next door to Jamal"
    assert swapped_names(claim, turn) == [("elena", "jamal")]
    assert swapped_names(claim, turn, frozenset({"elena", "novak"})) == []
    assert swapped_names(claim, turn, frozenset({"priya"})) == [("elena", "jamal")]


@pytest.mark.parametrize(
    ("claim", "evidence", "decade"),
    [
        ("Is in their thirties", "I'm 34 and just started learning piano.", "thirties"),
        ("Is in her early thirties", "I just turned 34", "early thirties"),
        ("User is in their 40s", "I'm 41 actually.", "40s"),
        ("User is in their 40s", "I'm 54 and thinking about a bootcamp", None),  # another decade
        ("Is in his forties or older", "I'm 45", None),  # a bound, not one decade
        ("Is in her late twenties", "my sister is 27", None),  # not the speaker's age
        ("Is 34 years old", "I'm 34", None),  # no decade: what was said
    ],
)
def test_an_age_in_decades_from_the_users_exact_age(
    claim: str, evidence: str, decade: str | None
) -> None:
    assert age_in_decade(claim, evidence) == decade


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It cost 1,500,000 dollars", {"1500000"}),
        ("12,345.67 in total", {"12345.67"}),
        ("4.5 km, then 1,500 m and 2,000 more", {"4.5", "1500", "2000"}),
        ("two kids", {"2"}),  # a number word is its value
        ("4k for the car, back by 3am on the 5th", {"4000", "3", "5"}),
        ("night shift 10p to 6a, gym at 6ish, 250g butter", {"10", "6", "250"}),
    ],
)
def test_a_number_with_thousands_commas_is_one_number(text: str, expected: set[str]) -> None:
    from mirage_guard.guard.evidence import _text as tx

    assert tx.numbers(text) == expected


def _decide_on(claim: str, span: str, words: list[str], numbers: float) -> Decision:
    link = EvidenceLink(
        turn_id="u1", similarity=0.9, span=span, unsupported_words=words,
        features={"unsupported_names": 0.0, "unsupported_numbers": numbers, "support_model": 1.0,
                  "sup_entailed": 0.9, "sup_inferable": 0.05, "sup_unsupported": 0.03,
                  "sup_contradicted": 0.02},
    )  # fmt: skip
    return decide(
        Candidate(text=claim), link, p_oi=0.05, p_stated=0.95, profile=make_profile(),
        policy=Policy(),
    )  # fmt: skip


def test_a_claim_with_another_value_than_the_users_turn_is_generated_and_names_both() -> None:
    """The support model reads the turn as saying it (entailed 0.9), the words do not."""
    d = _decide_on("Parents live 4 hours away", "My parents live 2 hours away.", ["4"], 1.0)
    assert d.provenance is Provenance.GENERATED
    (changed,) = [r for r in d.reasons if r.code is ReasonCode.CHANGED_VALUE]
    assert changed.params == {"turn_id": "u1", "said": "2", "claimed": "4"}
    assert "u1 says 2, the claim says 4" in changed.text
    d = _decide_on("Returns to work on Wednesday", "I go back to work on monday.",
                   ["wednesday"], 0.0)  # fmt: skip
    assert d.provenance is Provenance.GENERATED


def test_another_relative_or_side_than_the_users_turn_is_generated() -> None:
    """The support model reads the turn as saying it (entailed 0.9) and the aligner pairs
    "sister" with "brother" (no unsaid word): the relative is a value all the same."""
    d = _decide_on("Stayed with his sister in Gliwice", "we stay with my brother in Gliwice.",
                   [], 0.0)  # fmt: skip
    assert d.provenance is Provenance.GENERATED
    (changed,) = [r for r in d.reasons if r.code is ReasonCode.CHANGED_VALUE]
    assert changed.params == {"turn_id": "u1", "said": "brother", "claimed": "sister"}
    d = _decide_on("Had pain in her right knee", "pain in my left knee after the half", [], 0.0)
    assert d.provenance is Provenance.GENERATED
    d = _decide_on("This is your second baby", "First baby!", [], 0.0)
    assert d.provenance is Provenance.GENERATED
    d = _decide_on("You're in your mid-thirties", "I'm 41 actually.", [], 0.0)
    (changed,) = [r for r in d.reasons if r.code is ReasonCode.CHANGED_VALUE]
    assert changed.params == {"turn_id": "u1", "said": "41", "claimed": "mid-thirties"}
    d = _decide_on("Lives with her mum in Leeds", "I live with my mother in Leeds.", [], 0.0)
    assert d.provenance is Provenance.STATED
    d = _decide_on("Is 37 years old", "I'm 36 and I work as a nurse.", ["37"], 1.0)
    (changed,) = [r for r in d.reasons if r.code is ReasonCode.CHANGED_VALUE]
    assert changed.params == {"turn_id": "u1", "said": "36", "claimed": "37"}


def test_a_relative_doing_something_else_is_another_participant_not_another_value() -> None:
    """ "Visits her father every morning before work" / "I go over every morning before work and
    my brother takes the evenings": the brother is the subject of a clause that says none of the
    claim's words, another participant; the claim's father is not changed into him. A relative
    whose clause says the claim's thing is still another value ("Has a quilt her grandmother
    made" / "The quilt my mother made")."""
    d = _decide_on("Visits her father every morning before work",
                   "I go over every morning before work and my brother takes the evenings.",
                   [], 0.0)  # fmt: skip
    assert ReasonCode.CHANGED_VALUE not in {r.code for r in d.reasons}
    d = _decide_on("Has a quilt her grandmother made when Karen was born",
                   "The quilt my mother made when Karen was born.", [], 0.0)  # fmt: skip
    (changed,) = [r for r in d.reasons if r.code is ReasonCode.CHANGED_VALUE]
    assert changed.params == {"turn_id": "u1", "said": "mother", "claimed": "grandmother"}
    # a claim about someone else: their relative may be the subject ("Sister is a nurse")
    d = _decide_on("Sister is a nurse", "my brother is a nurse.", [], 0.0)
    assert d.provenance is Provenance.GENERATED


def test_a_value_some_user_turn_says_is_not_a_changed_value() -> None:
    # the user said "4" elsewhere (no unsupported number) / "wednesday" is aligned in the turns
    d = _decide_on("Parents live 4 hours away", "My parents live 2 hours away.", [], 0.0)
    assert ReasonCode.CHANGED_VALUE not in {r.code for r in d.reasons}
    d = _decide_on("Returns to work on Wednesday", "I go back to work on monday.", [], 0.0)
    assert ReasonCode.CHANGED_VALUE not in {r.code for r in d.reasons}


@pytest.mark.parametrize(
    ("text", "denied"),
    [
        ("no meal plan lol i live off campus", {"meal", "plan"}),
        ("I'm not a mom!! she's my NIECE lol", {"mom"}),
        ("lol no husband, it's just me", {"husband"}),
        ("I don't have an MBA. Just a bachelor's", {"mba"}),
        # not a denial of what follows: an answer, a condition, a hedge, how often
        ("no the pharmacy is the main income", set()),
        ("if not I'll look at goshiwons", set()),
        ("I'm not sure but I think we move in June", set()),
        ("its every weekend now, not every other.", set()),
        ("I hate running but I do it anyway", set()),  # a feeling, not a denial
        ("I don't run, but I swim every day", {"run"}),  # the clause ends at the comma
        # "none of us" says "we don't"; "I <verb> nothing" denies the verb, not its object
        ("None of us eat beef btw, my mom is Buddhist", {"eat", "beef"}),
        ("I take nothing for blood pressure.", {"take"}),
        ("we paid nothing for the flights", {"paid"}),
        ("I eat nothing but salad", set()),  # only salad
        ("I have nothing planned", set()),  # no content verb
        ("nothing beats a long hike", set()),  # not the speaker's verb
        ("none of the shops were open", set()),
        # a number denied in a correction, whatever its form in the claim ("three" is "3")
        ("sorry wrong number earlier, its 4 roommates not 3.", {"3"}),
    ],
)
def test_denied_stems(text: str, denied: set[str]) -> None:
    assert denied_stems(text) == denied


def test_a_number_word_and_its_digits_share_a_stem() -> None:
    from mirage_guard.guard.evidence import _text as tx

    assert tx.stem("three") == tx.stem("3") == "3"
    assert retracted_stems("Has three roommates", "its 4 roommates not 3.") == {"3"}
    assert retracted_stems("Has four roommates", "its 4 roommates not 3.") == frozenset()


@pytest.mark.parametrize(
    ("text", "denied"),
    [
        ("I don't miss paying 1800 for one room", set()),
        ("I never miss a game", set()),
        ("I don't mind cooking", set()),
        ("I can't wait to move to Denver", set()),
        ("I don't eat pork", {"eat", "pork"}),
    ],
)
def test_a_negation_before_miss_mind_or_wait_denies_nothing(text: str, denied: set[str]) -> None:
    assert denied_stems(text) == denied


def test_a_decade_in_two_digits_or_four_is_one_decade() -> None:
    from mirage_guard.guard.evidence import _text as tx

    assert tx.numbers("since the 90s") == tx.numbers("since the 1990s") == {"90", "1990"}
    assert tx.numbers("in her 20s") == {"20", "2020"}
    assert tx.numbers("the 1800s") == {"1800"}  # a century
    assert tx.numbers("the under 18s") == {"18"}
    # "three decades" is thirty years; "decades" alone stays a word
    assert tx.numbers("after three decades illustrating") == tx.numbers("thirty years") == {"30"}
    assert tx.numbers("for decades") == {"decades"}
    al = LexicalAligner().align_text("Drove trucks for two decades", ["I drove trucks 20 years"])
    assert not {"two", "decades"} & set(al.unsupported_words)
    al = LexicalAligner().align_text("Has DJed since the 1990s", ["been at it since the 90s"])
    assert "1990" not in al.unsupported_words
    al = LexicalAligner().align_text("Grew up in the 80s", ["I grew up in the 1990s"])
    assert "80" in al.unsupported_words


def test_never_misses_says_the_positive() -> None:
    """ "Never misses her Pilates class" is what "my Pilates class is sacred" says: the negation
    before "misses" needs no negation in the evidence."""
    al = LexicalAligner().align_text(
        "Never misses her Pilates class", ["my 6am Pilates class on Saturday is sacred"]
    )
    assert "never" not in al.unsupported_words
    al = LexicalAligner().align_text("Never goes to Pilates class", ["my Pilates class"])
    assert "never" in al.unsupported_words


@pytest.mark.parametrize(
    ("singular", "plural"),
    [("evening", "evenings"), ("daughter", "daughters"), ("building", "buildings"),
     ("teacher", "teachers"), ("thing", "things"), ("paper", "papers"), ("class", "classes")],
)  # fmt: skip
def test_a_plural_has_its_singulars_stem(singular: str, plural: str) -> None:
    from mirage_guard.guard.evidence import _text as tx

    assert tx.stem(singular) == tx.stem(plural)


@pytest.mark.parametrize(
    ("word", "possessive"),
    [("teacher", "teacher's"), ("parents", "parents'"), ("boss", "boss's"), ("mum", "mum's"),
     ("Ruth", "Ruth's")],
)  # fmt: skip
def test_a_possessive_has_its_nouns_stem(word: str, possessive: str) -> None:
    """ "teacher's" was "teacher'" (the "s" stripped, the apostrophe kept), so a claim about "a
    teacher's pension" never met the "teacher" of "I'm not a teacher!"."""
    from mirage_guard.guard.evidence import _text as tx

    assert tx.stem(possessive) == tx.stem(word)
    assert tx.retracted_stems(f"Is on a {possessive} pension", f"I'm not a {word}!") == {
        tx.stem(word)
    }


def test_an_ending_reads_a_plural_against_the_claims_singular() -> None:
    # "evenings" lost only its "s" before, "evening" its "ing": the ending did not match
    turn = "also I'm doing the design course online now instead of evenings at the polytech"
    assert retracted_stems("Takes evening design classes at the polytech", turn) == {"even"}


def test_a_claim_the_linked_turn_denies_is_generated_and_names_the_words() -> None:
    """The cross-encoder reads it as a restatement (entailed 0.9); the words deny it."""
    d = _decide_on("User has an MBA", "I don't have an MBA lol.", [], 0.0)
    assert d.provenance is Provenance.GENERATED
    (denied,) = [r for r in d.reasons if r.code is ReasonCode.DENIED]
    assert denied.params == {"turn_id": "u1", "words": ["mba"]}
    # a claim that says the negation itself is what the user said: not denied
    d = _decide_on("Does not have an MBA", "I don't have an MBA lol.", [], 0.0)
    assert ReasonCode.DENIED not in {r.code for r in d.reasons}
    # a denial of something else in the turn: not this claim's
    d = _decide_on("Lives off campus", "no meal plan lol i live off campus", [], 0.0)
    assert ReasonCode.DENIED not in {r.code for r in d.reasons}
    # "none of us" and "I <verb> nothing" deny too
    d = _decide_on("Might eat beef when dining out", "None of us eat beef btw.", [], 0.0)
    assert d.provenance is Provenance.GENERATED
    d = _decide_on("Takes medication for blood pressure", "I take nothing for BP.", [], 0.0)
    assert d.provenance is Provenance.GENERATED


_FAISAL = "im not a great cook tbh, faisal's the cook in our house lol"
_TOM = "i've never been to portugal but my brother Tom lived there for a year teaching english"


def test_what_the_user_denies_of_themselves_does_not_deny_another_persons_fact() -> None:
    """Seen in others_in_passing and people_mentions: the user's own denial ("im not a great
    cook", "i've never been to portugal") made the other person's fact generated."""
    cases = (("Husband Faisal does the cooking at home", _FAISAL),
             ("Brother Tom spent a year teaching English in Portugal", _TOM))  # fmt: skip
    for claim, turn in cases:
        d = _decide_on(claim, turn, [], 0.0)
        assert ReasonCode.DENIED not in {r.code for r in d.reasons}, claim
    # the same denial still denies the user's own claim
    d = _decide_on("Is a confident cook", _FAISAL, [], 0.0)
    assert [r.params["words"] for r in d.reasons if r.code is ReasonCode.DENIED] == [["cook"]]
    # a denial of the person ("lol no husband") or in a clause that is not the user's own
    d = _decide_on("Your husband is helping with the move", "lol no husband", [], 0.0)
    assert [r.params["words"] for r in d.reasons if r.code is ReasonCode.DENIED] == [["husband"]]
    d = _decide_on("Mother has Parkinson's", "She doesn't have Parkinson's, it's Alzheimer's.",
                   [], 0.0)  # fmt: skip
    assert [r.params["words"] for r in d.reasons if r.code is ReasonCode.DENIED] == [["parkinson"]]
    d = _decide_on("Son Kevin will start at UBC", "Kevin got into McGill. So Montreal, not UBC.",
                   [], 0.0)  # fmt: skip
    assert [r.params["words"] for r in d.reasons if r.code is ReasonCode.DENIED] == [["ubc"]]


@pytest.mark.parametrize(
    ("claim", "people"),
    [
        ("Husband Faisal does the cooking at home", {"husband", "faisal"}),
        ("Brother Tom spent a year teaching English in Portugal", {"brother", "tom"}),
        ("Your daughter Akosua picked medicine", {"daughter", "akosua"}),
        # an owner's "'s" is not a verb (the first word's capital says nothing)
        ("Siobhan's dad is a retired postman", {"dad"}),
        ("User's husband is called Tom", {"husband"}),
        # the user, or a thing, is not another person
        ("Is a confident cook", set()),
        # a verb the rules do not know: no subject is read, not "her friend's"
        ("Sang a solo at her friend's funeral", set()),
        ("Kitchen budget is 25k", set()),
    ],
)  # fmt: skip
def test_claim_people_are_the_persons_a_claim_is_about(claim: str, people: set[str]) -> None:
    from mirage_guard.guard.evidence import claim_people

    assert claim_people(claim) == people


def test_the_word_rules_read_the_whole_linked_turn() -> None:
    """The link's span can be one sentence of the turn; the denial may be in another."""
    link = EvidenceLink(
        turn_id="u1", similarity=0.9, span="I'm learning Welsh on Duolingo.",
        features={"support_model": 1.0, "sup_entailed": 0.9, "sup_contradicted": 0.05},
    )  # fmt: skip
    kwargs = {"p_oi": 0.05, "p_stated": 0.95, "profile": make_profile(), "policy": Policy()}
    claim = Candidate(text="Is a fluent Welsh speaker")
    alone = decide(claim, link, **kwargs)  # type: ignore[arg-type]
    assert ReasonCode.DENIED not in {r.code for r in alone.reasons}
    turn = "Ha, I'm not fluent at all. I'm learning Welsh on Duolingo."
    whole = decide(claim, link, turn_text=turn, **kwargs)  # type: ignore[arg-type]
    assert whole.provenance is Provenance.GENERATED
    assert [r.params["words"] for r in whole.reasons if r.code is ReasonCode.DENIED] == [["fluent"]]


@pytest.mark.parametrize(
    ("text", "ended"),
    [
        ("grand. other news, I quit the bakery last month", {"bakery"}),
        ("I finished at the cafe on Friday", {"cafe"}),
        (
            "doing the course online now instead of evenings at the polytech",
            {"even"},
        ),
        ("we sold our car last year", {"car"}),
        ("I used to live in Boston", {"live", "boston"}),
        ("I no longer work weekends", {"work", "weekend"}),
        ("no more salt, no more waakye every morning.", {"salt", "waakye", "morn"}),
        # a plan that did not happen, the plan before the words ...
        ("the Chorlton house fell through. survey found subsidence", {"chorlton", "house"}),
        ("Dave has pulled out, family emergency", {"dave"}),
        ("the trip to Oslo got cancelled", {"trip", "oslo"}),
        # ... or after them
        ("btw I dropped the Whitefield flat", {"whitefield", "flat"}),
        ("we've gone off Brighton.", {"brighton"}),
        ("So scrap Chicago, I'm only looking at Denver", {"chicago"}),
        ("we called off the wedding", {"wedd"}),
        ("I traded in the Volvo last spring", {"volvo"}),
        ("i withdrew the application", {"application"}),
        ("the GP took me off ramipril", {"ramipril"}),
        ("we took ourselves off the allotment list", {"allotment", "list"}),
        ("Biscuit got adopted on Saturday", {"biscuit"}),
        # a number the user takes back, not the one said now nor the thing counted
        ("I said 8 years, but I counted wrong, it's 10 years total.", {"8"}),
        ("I said four grandchildren, but now it is five.", {"4"}),
        ("I said 3 cats but yes, 3 cats and a dog", set()),
        # not the speaker's change of state
        ("I dropped off the kids at school", set()),
        ("I fell through the ice once", set()),
        ("I pulled out my phone", set()),
        ("I was adopted when I was two", set()),
        ("my brother traded in his bike", set()),
        ("My wife keeps telling me to quit eating kielbasa", set()),
        ("my mum used to make kopytka", set()),
        ("I work in IT so I'm used to project plans", set()),
        ("my left knee is still sore", set()),
    ],
)
def test_ended_stems(text: str, ended: set[str]) -> None:
    assert ended_stems(text) == ended


def test_retracted_stems_are_the_claims_words_a_turn_denies_or_ends() -> None:
    assert retracted_stems("Works early shifts at a bakery", "I quit the bakery.") == {"bakery"}
    # the claim says the state is past or negated itself: the ending confirms it
    assert retracted_stems("Used to work at a bakery", "I quit the bakery.") == set()
    assert retracted_stems("Does not work at the bakery", "I quit the bakery.") == set()
    # a past claim is still denied by a negation ("never had")
    assert retracted_stems("Had a dog as a child", "I never had a dog.") == {"dog"}
    assert retracted_stems("Works at a cafe", "I quit the bakery.") == set()
    # a claim that says the change itself ("instead of", "withdrew") is confirmed by it
    assert (
        retracted_stems("Takes Jardiance instead of metformin", "she took me off metformin")
        == set()
    )
    assert retracted_stems("Takes metformin", "she took me off metformin") == {"metformin"}
    assert retracted_stems("Withdrew the application", "i withdrew the application") == set()


def test_a_later_plan_that_fell_through_or_a_number_taken_back_retracts_the_claim() -> None:
    units = _units("Found one, a 2BHK in Whitefield. Paying the token amount next week.",
                   "btw I dropped the Whitefield flat, EMI would be 70% of my salary.",
                   "I said four grandchildren, but now it is five.")  # fmt: skip
    last = {u.turn_id: j for j, u in enumerate(units)}
    sims = np.array([0.8, 0.6, 0.5], np.float32)
    link = EvidenceLink(turn_id="u1", similarity=0.8, span=units[0].text)
    out = _retracted("Is buying a 2BHK in Whitefield", link, sims, units, last)
    assert (out.retracted_by, out.retracted_words) == ("u2", ["whitefield"])
    out = _retracted("Has four grandchildren", link, sims, units, last)
    assert (out.retracted_by, out.retracted_words) == ("u3", ["4"])
    assert _retracted("Has five grandchildren", link, sims, units, last).retracted_by is None


def test_a_move_to_a_named_place_retracts_where_the_user_lived() -> None:
    """The issue's own example: "Actually we moved to Denver" makes "Lives in Boston" stale,
    however unlike the claim the sentence reads (cosine under RETRACT_MIN_SIM)."""
    from mirage_guard.guard.evidence import moved_from

    units = _units("We live in Boston with our two cats.", "I work as a pharmacist.",
                   "Actually we moved to Denver last spring.")  # fmt: skip
    last = {u.turn_id: j for j, u in enumerate(units)}
    sims = np.array([0.8, 0.1, RETRACT_MIN_SIM - 0.2], np.float32)
    link = EvidenceLink(turn_id="u1", similarity=0.8, span=units[0].text)
    out = _retracted("Lives in Boston", link, sims, units, last)
    assert (out.retracted_by, out.retracted_words) == ("u3", ["boston"])
    assert _retracted("Has two cats", link, sims, units, last).retracted_by is None
    denver = "Actually we moved to Denver last spring."
    assert moved_from("User is based in Leeds", "I've relocated to York") == {"leed"}
    assert moved_from("Lives in Denver", denver) == set()  # the new place itself
    assert moved_from("Lives in Boston", "we moved to a bigger flat") == set()  # not a place
    assert moved_from("Lives in Boston", "my sister moved to Denver") == set()  # not the user
    # the linker reads a move in the user's own clauses only: "just moved" is the sister's here
    lyon = _units(
        "I live in Lyon with my husband.", "My sister just moved to Marseille for her job."
    )
    at = {u.turn_id: j for j, u in enumerate(lyon)}
    low = np.array([0.8, RETRACT_MIN_SIM - 0.2], np.float32)
    lives = EvidenceLink(turn_id="u1", similarity=0.8, span=lyon[0].text)
    assert _retracted("Lives in Lyon", lives, low, lyon, at).retracted_by is None
    ours = _units("I live in Lyon with my husband.", "We just moved to Marseille for his job.")
    moved = _retracted("Lives in Lyon", lives, low, ours, at)
    assert (moved.retracted_by, moved.retracted_words) == ("u2", ["lyon"])
    assert moved_from("Wife's parents are based in Setúbal", denver) == set()  # not the user's
    assert moved_from("Grew up in Boston", denver) == set()  # where they lived, not live
    # the old place named again in the same breath is still left behind ...
    colder = "Actually we moved to Denver last spring, Boston was too cold."
    assert moved_from("Lives in Boston", colder) == {"boston"}
    assert moved_from("Lives in Boston", "We moved to Denver from Boston in May.") == {"boston"}
    # ... unless the new place is in or beside it
    assert moved_from("Lives in Boston", "We moved to Brookline, just outside Boston.") == set()
    assert moved_from("Lives in Boston", "we moved to Cambridge near Boston") == set()


def test_an_ending_reads_another_form_of_the_same_word() -> None:
    turn = "I quit the pharmacy job and now I teach chemistry."
    assert retracted_stems("Works as a pharmacist", turn) == {"pharmacist"}
    assert retracted_stems("Works at a bakery", "I quit being a baker.") == {"bakery"}
    assert retracted_stems("Works as a nurse", "I quit the night shifts.") == set()


def test_a_claim_its_linked_turn_says_has_ended_is_generated() -> None:
    d = _decide_on("Works at a cafe", "big news! I finished at the cafe on Friday", [], 0.0)
    assert d.provenance is Provenance.GENERATED
    (denied,) = [r for r in d.reasons if r.code is ReasonCode.DENIED]
    assert denied.params["words"] == ["cafe"]


def _units(*texts: str) -> list[_Unit]:
    return [_Unit(f"u{i}", t) for i, t in enumerate(texts, start=1)]


def test_a_later_sentence_about_the_claim_that_ends_it_retracts_it() -> None:
    units = _units("I work early shifts at a bakery.", "Any tips for sleep?",
                   "Other news, I quit the bakery last month.")  # fmt: skip
    link = EvidenceLink(turn_id="u1", similarity=0.8, span=units[0].text)
    claim = "Works early shifts at a bakery"
    sims = np.array([0.8, 0.1, 0.6], np.float32)
    last = {u.turn_id: j for j, u in enumerate(units)}
    out = _retracted(claim, link, sims, units, last)
    assert (out.retracted_by, out.retracted_words) == ("u3", ["bakery"])
    # the sentence is about something else (under the similarity floor): nothing retracted,
    # unless it ends the place the claim says the user works at (all its words: "the bakery")
    low = np.array([0.8, 0.1, RETRACT_MIN_SIM - 0.01], np.float32)
    assert _retracted(claim, link, low, units, last).retracted_words == ["bakery"]
    other = "Sleeps during the day after early shifts"
    assert _retracted(other, link, low, units, last).retracted_by is None
    # the claim rests on the last turn: what was said before it cannot retract it
    later = EvidenceLink(turn_id="u3", similarity=0.6, span=units[2].text)
    assert _retracted(claim, later, sims, units, last).retracted_by is None


def test_a_retracted_claim_is_stale_and_names_the_later_turn() -> None:
    link = _link([], sup_entailed=0.9, sup_inferable=0.05, sup_contradicted=0.02)
    link = link.model_copy(update={"retracted_by": "u7", "retracted_words": ["lisbon"]})
    d = decide(
        Candidate(text="Lives in Lisbon"), link, p_oi=0.01, p_stated=0.99,
        profile=make_profile(), policy=Policy(),
    )  # fmt: skip
    assert d.provenance is Provenance.GENERATED
    assert d.source_turn_id is None
    (r,) = [r for r in d.reasons if r.code is ReasonCode.RETRACTED]
    assert r.params == {"turn_id": "u1", "later_turn_id": "u7", "words": ["lisbon"]}
    assert "u7, said after u1, denies or ends ['lisbon']" in r.text


@pytest.mark.parametrize(
    ("claim", "text", "correction", "expected"),
    [
        ("Dog Bruno is 9 years old", "also correction he's 8 not 9, just checked", False, ["9"]),
        ("Has taught math for seven years", "One fix though, it's six years, not seven.", False,
         ["7"]),
        ("Is travelling to Lisbon in May", "we're going in june not may", False, ["may"]),
        ("Has a 3-year-old greyhound", "she's actually 4, not 3", False, ["3"]),
        # the claim already gives the new value: it is the fix, not the old value
        ("Has taught 7th grade math for six years", "it's six years, not seven.", False, []),
        # "not" before another kind, or no value of the claim's
        ("Has two kids", "not 2 but 3 cats", False, []),
        ("Works 3 days a week", "I work 3 days, not 4", False, []),
        # another value in a correction: only when the caller reads the sentence as one
        ("Has her driving test on 12 February", "Now it is 9 March", True, ["february"]),
        ("Has her driving test on 12 February", "Now it is 9 March", False, []),
        # one number in the claim, one other in the correction, ending its phrase or before the
        # claim's own word after its number
        ("Dog Pip is 9 years old", "she's actually 10 now", True, ["9"]),
        ("Weekly food budget is £80", "the budget is more like £60 now", True, ["80"]),
        ("Wants a laptop under $1,000", "so my budget is 1200 actually", True, ["1000"]),
        ("Keeps 4 hens", "we only have 3 hens left", True, ["4"]),
        # numbers read as everywhere else: "2k" is 2000, the pronoun "one" is no number
        ("Rent budget is 2k a month", "more like 3k now", True, ["2000"]),
        ("Is the one in Memphis with 2 dogs", "actually 3 dogs", True, ["2"]),
        ("Dog Pip is 9 years old", "she's actually 10 now", False, []),
        # the sentence says the claim's number too, or its number counts something else
        ("Son Tom is 9", "he's the 9 year old actually, the 6 year old eats anything", True, []),
        ("Has lived in Portugal for six years", "We live in Bonfim now, €1,100 for a flat", True,
         []),
        # ... a number ten times the claim's: the count of something else, no recount
        ("Pays Octopus £96 a month for energy", "Card down to £1,100.", True, []),
        ("Weekly grocery budget is $120", "i can go to 140 max", True, ["120"]),
        # the old value quoted as said before, or set after the new one with "than": no
        # correction word needed
        ("Dog Biscuit is 9 years old", "Oh and I said 9 but she's actually 10 now", False,
         ["9"]),
        ("Has 8 years of experience", "I said 8 years, but I counted wrong, it's 10 years total",
         False, ["8"]),
        ("Dog Pepper is about 2 years old", "the vet says she's closer to 4 than 2", False, ["2"]),
        # ... not a quote with no other value, nor "than" with none before it
        ("Has 2 kids", "I said 2 kids and I meant it", False, []),
        ("Has 2 kids", "we have more than 2 kids", False, []),
        ("Dog Pepper is about 2 years old", "she's about 4, bigger than 2 of my cats", False,
         []),
        # a later number with a new-value phrase ("from", as a recount end)
        ("Pays £850 a month in rent", "rent going up to 925 from april", True, ["850"]),
    ],
)  # fmt: skip
def test_corrected_values(claim: str, text: str, correction: bool, expected: list[str]) -> None:
    from mirage_guard.guard.evidence._text import corrected_values

    assert corrected_values(claim, text, correction=correction) == expected


def test_a_later_correction_of_the_claims_value_retracts_it() -> None:
    """ "he's 8 not 9" is short and shares few words with "Dog Bruno is 9 years old" (cosine
    0.32, under RETRACT_MIN_SIM): a value the claim states, corrected by a later sentence, makes
    it stale from CORRECTED_MIN_SIM. Another value in a sentence that reads as a correction
    counts only in a turn about the claim."""
    from mirage_guard.guard.evidence._linker import CORRECTED_MIN_SIM

    units = [_Unit("u1", "Bruno is 9 and hates the vet."), _Unit("u2", "Any tips?"),
             _Unit("u3", "also correction he's 8 not 9, just checked.")]  # fmt: skip
    last = {u.turn_id: j for j, u in enumerate(units)}
    link = EvidenceLink(turn_id="u1", similarity=0.8, span=units[0].text)
    sims = np.array([0.8, 0.1, CORRECTED_MIN_SIM + 0.05], np.float32)
    out = _retracted("Dog Bruno is 9 years old", link, sims, units, last)
    assert (out.retracted_by, out.retracted_words) == ("u3", ["9"])
    below = np.array([0.8, 0.1, CORRECTED_MIN_SIM - 0.05], np.float32)
    assert _retracted("Dog Bruno is 9 years old", link, below, units, last).retracted_by is None
    # "it's now March 15" in a turn about a flight does not move a knee surgery
    units = [_Unit("u1", "Surgery is on January 8."),
             _Unit("u2", "I changed my flight, it's now March 15 not the 14th."),
             _Unit("u3", "my surgery is moved, the surgeon is sick."),
             _Unit("u3", "Now it is 9 March.")]  # fmt: skip
    last = {u.turn_id: j for j, u in enumerate(units)}
    link = EvidenceLink(turn_id="u1", similarity=0.8, span=units[0].text)
    claim = "Has knee surgery on January 8"
    sims = np.array([0.8, 0.3, 0.5, 0.3], np.float32)
    out = _retracted(claim, link, sims, units, last)
    assert (out.retracted_by, out.retracted_words) == ("u3", ["january"])
    units[2] = _Unit("u3", "Busy week.")
    sims = np.array([0.8, 0.3, 0.1, 0.3], np.float32)
    assert _retracted(claim, link, sims, units, last).retracted_by is None


@pytest.mark.parametrize(
    ("claim", "unsaid", "turn", "intents"),
    [
        # a plan or an expectation the user did not voice
        ("Plans to plant sunflowers along the north fence", ["plans", "sunflowers"],
         "the north fence gets full sun all afternoon", ["plans"]),
        ("User expects the kitchen to be finished before the baby arrives",
         ["expects", "finished", "baby"], "Kitchen is arriving next week.", ["expects"]),
        # ... voiced in any words, said, or the claim's own negation: not read
        ("Plans to plant sunflowers", ["plans", "sunflowers"],
         "I want to put sunflowers along the fence", []),
        ("Plans to plant sunflowers", ["plans"], "we're going to plant sunflowers", []),
        ("Plans to plant sunflowers", ["sunflowers"], "the fence gets full sun", []),
        ("You don't want to learn German with apps only", ["want", "apps"],
         "Duolingo is not enough for me", []),
    ],
)  # fmt: skip
def test_an_unsaid_intention_is_not_a_stated_fact(
    claim: str, unsaid: list[str], turn: str, intents: list[str]
) -> None:
    from mirage_guard.guard.evidence import unsaid_intent

    assert unsaid_intent(claim, unsaid, turn) == intents


def test_a_claim_with_an_unsaid_plan_is_inferred_not_stated() -> None:
    """ "Plans to plant sunflowers along the north fence" / "the north fence gets full sun all
    afternoon": the scores read it as a restatement; the plan is the writer's conclusion."""
    feats = {"sup_entailed": 0.9, "sup_inferable": 0.05, "align_unsupported_share": 0.25}
    link = _link(["plans"], **feats).model_copy(
        update={"span": "the north fence gets full sun all afternoon"}
    )
    kwargs = {"p_oi": 0.05, "p_stated": 0.9, "profile": make_profile(), "policy": Policy()}
    claim = Candidate(text="Plans to plant sunflowers along the north fence")
    d = decide(claim, link, **kwargs)  # type: ignore[arg-type]
    assert d.provenance is Provenance.INFERRED
    said = link.model_copy(update={"span": "I want to plant sunflowers along the north fence"})
    assert decide(claim, said, **kwargs).provenance is Provenance.STATED  # type: ignore[arg-type]


def test_a_rank_no_user_turn_says_is_glued_on() -> None:
    """ "Works as a senior QA engineer" from "come here 8 months ago for job as QA engineer":
    "senior" is a detail, never a paraphrase, so a restatement with it is generated."""
    link = _link(["senior"], sup_entailed=0.8, sup_inferable=0.1, sup_unsupported=0.05)
    d = decide(
        Candidate(text="Works as a senior QA engineer"), link, p_oi=0.01, p_stated=0.99,
        profile=make_profile(), policy=Policy(),
    )  # fmt: skip
    assert d.provenance is Provenance.GENERATED
    glued = [r for r in d.reasons if r.code is ReasonCode.GLUED_DETAIL]
    assert [r.params["words"] for r in glued] == [["senior"]]
    certified = _link(["certified"], sup_entailed=0.8, sup_inferable=0.1, sup_unsupported=0.05)
    d = decide(
        Candidate(text="Is a certified nurse"), certified, p_oi=0.01, p_stated=0.99,
        profile=make_profile(), policy=Policy(),
    )  # fmt: skip
    assert ReasonCode.GLUED_DETAIL not in {r.code for r in d.reasons}


class _CountingReads(_ReadsByTurn):
    """Counts its calls; each call's reading is new (a call number added to every row), so a
    reused reading shows."""

    def __init__(self, by_premise: dict[str, list[float]]) -> None:
        super().__init__(by_premise)
        self.calls = 0

    def predict_text(self, premises: Sequence[str], claims: Sequence[str]) -> np.ndarray:
        self.calls += 1
        rows = super().predict_text(premises, claims)
        return rows + np.float32(self.calls * 1e-6)


def test_remembering_reads_the_same_call_once_and_gives_its_first_reading_back() -> None:
    """`calibrate stated-floor` decides a set once per floor: inside `remembering()` a call with
    the same pairs is not read again, and returns the first reading to the bit; another call is
    read; outside the block every call is read."""
    model = _CountingReads({"We live in Boston.": [0.9, 0.05, 0.05, 0.0],
                            "I'm a nurse.": [0.1, 0.6, 0.3, 0.0]})  # fmt: skip
    support = ClaimSupport(model, top_k=1)
    turns, scores = ["We live in Boston.", "I'm a nurse."], np.asarray([[0.9, 0.1]], np.float32)
    with support.remembering():
        (a,) = support.assess(["Lives in Boston"], turns, scores)
        (b,) = support.assess(["Lives in Boston"], turns, scores)
        assert model.calls == 1
        assert b.features == a.features
        support.assess(["Works in a hospital"], turns, scores[:, ::-1])
        assert model.calls == 2
    (c,) = support.assess(["Lives in Boston"], turns, scores)
    assert model.calls == 3
    assert c.features["sup_entailed"] != a.features["sup_entailed"]
