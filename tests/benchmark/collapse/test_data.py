"""The packaged situation set and reference distributions (benchmark/data/collapse)."""

from __future__ import annotations

from collections import Counter

import pytest

from mirage_guard.benchmark.collapse import (
    PERSONAS,
    Situation,
    load_reference,
    load_situations,
    persona_of,
    select_situations,
)
from mirage_guard.guard.errors import InputError


@pytest.fixture(scope="module")
def situations() -> list[Situation]:
    return load_situations()


def test_at_least_140_situations_over_at_least_14_contexts(situations: list[Situation]) -> None:
    assert len(situations) >= 140
    per_context = Counter(s.context for s in situations)
    assert len(per_context) >= 14
    assert min(per_context.values()) >= 10


def test_posts_are_short_first_person_and_distinct(situations: list[Situation]) -> None:
    for s in situations:
        words = len(s.situation.split())
        assert 40 <= words <= 150, (s.id, words)
        lowered = f" {s.situation.lower()} "
        assert any(w in lowered for w in (" i ", " i'm ", " my ", " me ")), s.id
    assert len({s.situation for s in situations}) == len(situations)
    assert all(s.id.split("-")[0] for s in situations)


def test_each_stance_agrees_with_its_h_and_e(situations: list[Situation]) -> None:
    for s in situations:
        assert persona_of(s.stance.h, s.stance.e) is s.stance.persona, s.id


def test_no_single_stance_dominates_the_set(situations: list[Situation]) -> None:
    counts = Counter(s.stance.persona for s in situations)
    assert max(counts.values()) / len(situations) < 0.5


def test_reference_covers_every_context_and_sums_to_one(situations: list[Situation]) -> None:
    reference = load_reference()
    assert {s.context for s in situations} == set(reference.contexts)
    for context in reference.contexts:
        shares = reference.shares(context)
        assert len(shares) == len(PERSONAS)
        assert sum(shares) == pytest.approx(1.0)
    assert "estimate" in reference.note


def test_select_by_context_and_limit(situations: list[Situation]) -> None:
    chosen = select_situations(situations, ["grief", "legal"], limit=3)
    assert Counter(s.context for s in chosen) == {"grief": 3, "legal": 3}
    with pytest.raises(InputError, match="unknown context"):
        select_situations(situations, ["astrology"])


def test_a_bad_row_is_reported_with_its_line(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "bad.jsonl"
    path.write_text(
        '{"id": "x-1", "context": "c", "situation": "s", '
        '"stance": {"persona": "Healer", "H": 2.0, "E": 0.5}}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r"bad\.jsonl:1"):
        load_situations(path)
