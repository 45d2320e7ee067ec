"""Sentence splitting as chat is written."""

from __future__ import annotations

import pytest

from mirage_guard.guard.evidence import says_nothing, sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "is it safe to take ibuprofen with coffee? back is killing me",
            ["is it safe to take ibuprofen with coffee?", "back is killing me"],
        ),
        (
            "ok thanks. night shifts are only tue to thu now",
            ["ok thanks.", "night shifts are only tue to thu now"],
        ),
        ("wow! so cool", ["wow!", "so cool"]),
        ("I live in Lisbon. We moved in May.", ["I live in Lisbon.", "We moved in May."]),
        ("I like e.g. the sea.", ["I like e.g. the sea."]),
        ("Meet me at 3 p.m. today", ["Meet me at 3 p.m. today"]),
        ("It costs 3.5 euros.", ["It costs 3.5 euros."]),
        # a line break ends a sentence: chat lines often carry no stop
        ("not vegan\nwork at the bakery", ["not vegan", "work at the bakery"]),
        ("I live in Lisbon.\n\n  We moved in May", ["I live in Lisbon.", "We moved in May"]),
        ("", [""]),
    ],
)
def test_sentences_end_at_a_stop_even_when_chat_goes_on_in_lowercase(
    text: str, expected: list[str]
) -> None:
    assert sentences(text) == expected


@pytest.mark.parametrize(
    "claim",
    ["x", "the", "I", "User", "User is", "Is", "Has a", "Likes", "likes it", "I like it",
     "User's", "Maybe a lot of them", "i would like to do that myself"],
)  # fmt: skip
def test_a_claim_of_stopwords_and_frame_verbs_says_nothing(claim: str) -> None:
    assert says_nothing(claim)


@pytest.mark.parametrize(
    "claim",
    ["Lives in Lisbon", "Lisbon", "Works in IT", "Is 34", "Has two kids", "Likes jazz",
     "Is vegan", "Name is Lukas", "Vive em Lisboa", "Живёт в Лиссабоне", "mine"],
)  # fmt: skip
def test_a_claim_with_one_content_word_number_or_acronym_says_something(claim: str) -> None:
    assert not says_nothing(claim)
