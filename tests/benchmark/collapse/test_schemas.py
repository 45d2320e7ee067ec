"""Strict-schema parsing of the judge's and the plan's JSON, with typed errors."""

from __future__ import annotations

import pytest

from mirage_guard.benchmark.collapse import (
    ScoreErrorCode,
    StanceOutputError,
    StancePlan,
    StanceScore,
    parse_strict,
)
from mirage_guard.guard.errors import LLMOutputError


def test_a_valid_score_parses_with_and_without_a_fence() -> None:
    plain = parse_strict('{"H": -0.4, "E": 0.7, "rationale": "blunt but useful"}', StanceScore)
    assert (plain.h, plain.e, plain.rationale) == (-0.4, 0.7, "blunt but useful")
    fenced = parse_strict('```json\n{"H": 0.5, "E": 0.5}\n```', StanceScore)
    assert (fenced.h, fenced.e, fenced.rationale) == (0.5, 0.5, "")
    plan = parse_strict('{"H": 0.1, "E": 0.9, "approach": "name the risk"}', StancePlan)
    assert plan.approach == "name the risk"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("The answer is supportive.", ScoreErrorCode.NOT_JSON),
        ('{"H": 0.5, "E": ', ScoreErrorCode.NOT_JSON),
        ("[0.5, 0.5]", ScoreErrorCode.NOT_OBJECT),
        ('{"H": 0.5}', ScoreErrorCode.MISSING_FIELD),
        ('{"H": 0.5, "E": 0.1, "persona": "Healer"}', ScoreErrorCode.EXTRA_FIELD),
        ('{"H": 1.5, "E": 0.1}', ScoreErrorCode.OUT_OF_RANGE),
        ('{"H": 0.5, "E": -1.01}', ScoreErrorCode.OUT_OF_RANGE),
        ('{"H": "high", "E": 0.1}', ScoreErrorCode.WRONG_TYPE),
    ],
)
def test_a_bad_score_raises_a_typed_error(text: str, code: ScoreErrorCode) -> None:
    with pytest.raises(StanceOutputError) as caught:
        parse_strict(text, StanceScore, model="judge-x")
    assert caught.value.code is code
    assert isinstance(caught.value, LLMOutputError)  # the runner's failure path handles it
    assert caught.value.output == text
    assert caught.value.model == "judge-x"
    assert caught.value.retryable is False
