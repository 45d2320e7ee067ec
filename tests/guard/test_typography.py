"""The words as users type them: typographic apostrophes, letters outside ASCII, line breaks.

Phones and word processors type "I don’t eat meat" (U+2019), and people's names and places carry
accents ("Zürich", "Ciarán"). The word rules are written with "'" and ASCII letters; the evidence
path reads every text through :func:`plain` and tokenises letters of any alphabet. Chat lines
often end with a line break and no stop: a line break ends a sentence and a clause."""

from __future__ import annotations

import pytest

from mirage_guard.guard import (
    Candidate,
    EvidenceLink,
    Guard,
    GuardSettings,
    Policy,
    Provenance,
    ReasonCode,
    Role,
    Turn,
)
from mirage_guard.guard._decision import decide
from mirage_guard.guard.evidence import (
    EvidenceLinker,
    content_stems,
    denied_stems,
    plain,
    retracted_stems,
    stem,
)
from mirage_guard.guard.evidence._text import name_words, proper_names, words
from tests.calibration.factories import make_profile
from tests.fakes.embedder import HashingEmbedder


def test_plain_reads_typographic_quotes_and_spaces_as_ascii() -> None:
    assert plain("I don\u2019t eat meat, I\u2019m vegan") == "I don't eat meat, I'm vegan"
    assert plain("\u201cno\u201d\u00a0thanks \u2018Jo\u2019") == "\"no\" thanks 'Jo'"
    # a dash stays: "Paris–Lyon" is two words, "Paris-Lyon" one
    assert plain("Paris\u2013Lyon \u2014 weekly") == "Paris\u2013Lyon \u2014 weekly"
    assert words(plain("Paris\u2013Lyon")) == ["paris", "lyon"]


def test_a_word_with_letters_outside_ascii_is_one_word() -> None:
    assert words("I live in Zürich with Ciarán") == ["i", "live", "in", "zürich", "with", "ciarán"]
    assert content_stems("Lives in Ciarán's flat") == {"live", "ciaran", "flat"}
    # a writer model often drops the accents: the same word without them
    assert stem("Renée") == stem("Renee") == "renee"
    assert proper_names("We moved to Évora with Zoë last year") == {"evora", "zoe"}
    assert {"zürich", "zurich"} <= name_words("I live in Zürich")


@pytest.fixture(scope="module")
def guard() -> Guard:
    # the word rules do not depend on the encoder: a hashing stand-in reads them as MiniLM does
    return Guard.from_settings(GuardSettings(), embedder=HashingEmbedder())


def _tag(guard: Guard, turn: str, claims: list[str]) -> list[tuple[Provenance, list[str]]]:
    turns = [Turn(id="t1", role=Role.USER, content=turn)]
    out = []
    for d in guard.tag(turns, [Candidate(id=f"c{i}", text=c) for i, c in enumerate(claims)]):
        out.append((d.provenance, [f"{r.code.value}:{r.params.get('words')}" for r in d.reasons]))
    return out


def test_a_typographic_apostrophe_denies_as_an_ascii_one(guard: Guard) -> None:
    """The bug this fixes: "don’t" was read as "don" and "t", so "Eats meat" from "I don’t eat
    meat" was no denial at all."""
    curly = _tag(guard, "I don\u2019t eat meat, I\u2019m vegan.", ["Eats meat", "Is vegan"])
    ascii_ = _tag(guard, "I don't eat meat, I'm vegan.", ["Eats meat", "Is vegan"])
    assert curly == ascii_
    assert curly[0][0] is Provenance.GENERATED
    # and the rule itself, with scores that would store it
    turn = "I don\u2019t eat meat, I\u2019m vegan."
    link = EvidenceLink(turn_id="t1", similarity=0.9, span=turn)
    d = decide(Candidate(text="Eats meat"), link, p_oi=0.01, p_stated=0.99,
               profile=make_profile(), policy=Policy(), turn_text=turn)  # fmt: skip
    assert d.provenance is Provenance.GENERATED
    (denied,) = [r for r in d.reasons if r.code is ReasonCode.DENIED]
    assert denied.params["words"] == ["meat"]
    assert d.candidate.text == "Eats meat"
    assert d.evidence_span == turn


def test_a_line_break_ends_what_a_negation_denies(guard: Guard) -> None:
    assert denied_stems("not vegan\nwork at the bakery these days") == {"vegan"}
    assert retracted_stems("Works at a bakery", "not vegan\nwork at the bakery") == set()
    lines = _tag(guard, "not vegan\nwork at the bakery these days", ["Works at a bakery"])
    stops = _tag(guard, "not vegan. work at the bakery these days", ["Works at a bakery"])
    assert lines == stops
    assert not any(r.startswith(ReasonCode.DENIED.value) for r in lines[0][1])


def test_a_name_said_with_its_accents_supports_the_claim_without_them() -> None:
    linker = EvidenceLinker(HashingEmbedder())
    turns = [Turn(id="t1", role=Role.USER, content="I moved to Zürich with my wife Renée.")]
    links = linker.link(turns, [Candidate(text="Lives in Zurich with his wife Renee"),
                                Candidate(text="Lives in Zürich with his wife Renée"),
                                Candidate(text="Lives in Zürich with his wife Chloé")])  # fmt: skip
    assert [x.features["unsupported_names"] for x in links] == [0.0, 0.0, 1.0]


def test_the_users_name_is_read_as_the_turns_are() -> None:
    """A user name typed with "’" names the user in a turn written with "'" (and the reverse)."""
    from mirage_guard.guard.evidence._subject import name_parts, said_of_user

    assert (
        name_parts("Declan O\u2019Brien") == name_parts("Declan O'Brien") == {"declan", "o'brien"}
    )
    # the claim opens with the user's name: about the user, so another person's clause is dropped
    later = "my wife quit the pharmacy, not me"
    assert said_of_user("O'Brien runs a pharmacy", later, "Declan O\u2019Brien") == "not me"
