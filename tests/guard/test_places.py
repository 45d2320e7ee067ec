"""A country or US state concluded from a city the user named is an inference
(``place_inferred``, ``inferred_place``): "Is originally from Portugal" / "My parents are in
Porto, too far"."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirage_guard.guard import Candidate, EvidenceLink, Policy, Provenance
from mirage_guard.guard._decision import decide
from mirage_guard.guard._reasons import ReasonCode
from mirage_guard.guard.evidence import place_inferred
from tests.calibration.factories import make_profile


@pytest.mark.parametrize(
    ("claim", "turn", "expected"),
    [
        ("Is originally from Portugal", "My parents are in Porto, too far.", ("porto", "portugal")),
        (
            "Is originally from Spain",
            "I just moved to Glasgow from Valencia and I have a horrible toothache.",
            ("valencia", "spain"),
        ),
        ("Mother is from Taiwan", "we want to go to Taipei in April, my mom", ("taipei", "taiwan")),
        ("Lives in Ohio", "I fly into Columbus on the 26th", ("columbus", "ohio")),
        ("Lives in the UK", "we moved up to Glasgow in May", ("glasgow", "uk")),
        ("Grew up in the U.K.", "my mum still lives in Leeds", ("leeds", "u.k")),
        ("Lives in New York State", "lol we are in Buffalo now", ("buffalo", "new york")),
        # a city named after its country names the city, not the country
        (
            "Is originally from Mexico",
            "I was at an agency in Mexico City for four years.",
            ("mexico city", "mexico"),
        ),
    ],
)
def test_a_city_the_turn_names_gives_its_country_or_state(
    claim: str, turn: str, expected: tuple[str, str]
) -> None:
    assert place_inferred(claim, turn) == expected


@pytest.mark.parametrize(
    ("claim", "turn"),
    [
        # the turn names the country itself: the claim says what the user said
        ("Lives in Medellín, Colombia", "I am from Colombia, I live in Medellín."),
        ("Lives in Mexico", "I live in Mexico, in Mexico City"),
        # the claim names the city too: the country is an apposition, not the claim's point
        ("Lives in Leeds, England", "I live in Leeds"),
        # a city in another country
        ("Is originally from France", "My parents are in Porto, too far."),
        # a word that is also a town's name, not written as one ("Police" is in Poland)
        ("Lives in Poland", "the police came round"),
        # a sentence's first word is capitalised whatever it is ("Reading" is in England)
        ("Lives in England", "Reading is my thing. Novels mostly"),
        # a country that is as often a person's name
        ("Is close to Jordan", "Jordan and I went to Amman"),
        # no place at all
        ("Has two cats", "Two cats, Miso and Pepper."),
    ],
)
def test_no_place_is_inferred_without_a_city_in_the_claims_region(claim: str, turn: str) -> None:
    assert place_inferred(claim, turn) is None


def _link(turn: str, words: list[str], **features: float) -> EvidenceLink:
    feats = {"unsupported_names": 0.0, "unsupported_numbers": 0.0, "support_model": 1.0}
    return EvidenceLink(
        turn_id="u1", similarity=0.5, span=turn, features={**feats, **features},
        unsupported_words=words,
    )  # fmt: skip


def _decided(
    claim: str, link: EvidenceLink, p_oi: float, p_stated: float = 0.1
) -> tuple[Provenance, set[ReasonCode]]:
    d = decide(
        Candidate(text=claim), link, p_oi=p_oi, p_stated=p_stated, profile=make_profile(),
        policy=Policy(),
    )  # fmt: skip
    return d.provenance, {r.code for r in d.reasons}


def test_a_country_concluded_from_a_city_is_inferred_whatever_the_scores() -> None:
    """The over-inference score read "Is originally from Spain" as generated (0.89) and the
    stated score "Is likely originally from Mexico" as a restatement: it is a conclusion."""
    turn = "I just moved to Glasgow from Valencia and I have a horrible toothache."
    claim = "Is originally from Spain"
    prov, codes = _decided(claim, _link(turn, ["originally", "spain"]), p_oi=0.9)
    assert prov is Provenance.INFERRED
    assert ReasonCode.PLACE_INFERRED in codes
    prov, codes = _decided(claim, _link(turn, ["originally"]), p_oi=0.05, p_stated=0.95)
    assert prov is Provenance.INFERRED
    assert ReasonCode.PLACE_INFERRED in codes


def test_a_claim_that_adds_more_than_the_place_is_left_to_the_scores() -> None:
    """ "Likely watches Scotland rugby matches" / "somewhere special in Edinburgh": the place is
    a conclusion, the rugby is not; and a turn that denies the claim, or a city in another
    country, gives no place."""
    turn = "I want to book somewhere special in Edinburgh for our anniversary"
    claim = "Watches Scotland rugby matches"
    prov, codes = _decided(claim, _link(turn, ["watches", "rugby", "matches"]), p_oi=0.9)
    assert prov is Provenance.GENERATED
    assert ReasonCode.PLACE_INFERRED not in codes
    denied = _link("I don't live in Edinburgh any more, we moved to Leeds", ["lives"])
    prov, codes = _decided("Lives in Scotland", denied, p_oi=0.9)
    assert (prov, ReasonCode.PLACE_INFERRED in codes) == (Provenance.GENERATED, False)
    prov, codes = _decided("Lives in Wales", _link("I moved to Porto", []), p_oi=0.9)
    assert (prov, ReasonCode.PLACE_INFERRED in codes) == (Provenance.GENERATED, False)


@settings(max_examples=200, deadline=None)
@given(claim=st.text(max_size=80), turn=st.text(max_size=400))
def test_any_text_gives_a_place_or_none(claim: str, turn: str) -> None:
    """Whatever the writer and the user typed, the reading gives a (city, region) pair of words
    or nothing, and never fails."""
    found = place_inferred(f"Lives in Spain {claim}", turn)
    assert found is None or all(isinstance(x, str) and x for x in found)
    assert place_inferred(claim, turn) is None or isinstance(place_inferred(claim, turn), tuple)
