"""`MIRAGE_STATED_MIN`: a floor on P(stated) for what the score alone stores as a stated fact,
read from the settings by the shipped guard (real MiniLM, the shipped support model and profile)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mirage_guard.guard import Action, Candidate, Guard, GuardSettings, Provenance, Role, Turn
from mirage_guard.guard.evidence import shared_minilm

pytestmark = pytest.mark.slow

SAID = "Hi! I work nights at the children's hospital, I'm a nurse there."
TURNS = [
    Turn(id="t1", role=Role.USER, content=SAID),
    Turn(id="t2", role=Role.ASSISTANT, content="That sounds demanding. How do you sleep?"),
]
SAID_WHOLE = Candidate(text="Works as a nurse")  # every content word said in t1
SCORED = Candidate(text="Works night shifts")  # stated on P(stated) alone


@pytest.fixture(scope="module")
def guards() -> Iterator[tuple[Guard, Guard]]:
    default = Guard.from_settings(GuardSettings(), embedder=shared_minilm())
    strict = Guard.from_settings(GuardSettings(stated_min=1.0), embedder=shared_minilm())
    try:
        yield default, strict
    finally:
        default.close()
        strict.close()


def test_the_floor_makes_a_claim_stated_on_its_score_alone_a_hypothesis(
    guards: tuple[Guard, Guard],
) -> None:
    default, strict = guards
    (before,) = default.tag(TURNS, [SCORED])
    (after,) = strict.tag(TURNS, [SCORED])
    assert (before.provenance, before.action) == (Provenance.STATED, Action.STORE)
    assert (after.provenance, after.action) == (Provenance.INFERRED, Action.STORE_AS_HYPOTHESIS)
    assert after.source_turn_id == "t1"
    (floor,) = [r for r in after.reasons if r.code.value == "below_stated_floor"]
    assert floor.params["floor"] == 1.0
    assert floor.params["p_stated"] == pytest.approx(before.reasons[1].params["p_stated"])


def test_a_claim_said_word_for_word_stays_stated_under_any_floor(
    guards: tuple[Guard, Guard],
) -> None:
    _, strict = guards
    (d,) = strict.tag(TURNS, [SAID_WHOLE])
    assert (d.provenance, d.action) == (Provenance.STATED, Action.STORE)
    assert [r.code.value for r in d.reasons[1:]] == ["said_whole"]
