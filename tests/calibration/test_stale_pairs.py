"""The stale / holds triples (benchmark/data/stale_pairs/, data card there): well formed, read as
labelled claims, and scored by `mirage guard eval-suite` as the set "stale triples"."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from mirage_guard.calibration._data import load_examples
from mirage_guard.calibration._stale_pairs import (
    BETWEEN,
    HOLDS_HOWS,
    STALE_HOWS,
    load_triples,
    stale_pairs_folder,
    triple_claims,
    triple_files,
    write_triples_set,
)
from mirage_guard.calibration._suite import STALE_SET, default_sets
from mirage_guard.guard import Label, Provenance, Role
from mirage_guard.guard.errors import InputError

ROW = {
    "id": "xx-001", "earlier": "I live in Porto.", "later": "The Lisbon flat has a balcony.",
    "claim": "Lives in Porto", "label": "stale", "kind": "location", "how": "new_value",
    "note": "moved",
}  # fmt: skip


def _folder(tmp_path: Path, *rows: dict[str, object], author: str = "xx") -> Path:
    (tmp_path / author).mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(r) + "\n" for r in rows)
    (tmp_path / author / "triples.jsonl").write_text(lines, encoding="utf-8")
    return tmp_path


def test_the_packaged_triples_are_well_formed_and_balanced() -> None:
    rows = load_triples(stale_pairs_folder())
    assert len(rows) == 656
    card = (stale_pairs_folder() / "README.md").read_text(encoding="utf-8")
    for author, n in Counter(a for a, _ in rows).items():
        labels = Counter(t.label for a, t in rows if a == author)
        assert abs(labels["stale"] - labels["holds"]) <= 1, author
        hows = Counter(t.how for a, t in rows if a == author)
        # the brief: every way of each label, none above a quarter of its label
        assert set(hows) == STALE_HOWS | HOLDS_HOWS, author
        assert max(hows[h] for h in STALE_HOWS) <= labels["stale"] / 4, author
        assert max(hows[h] for h in HOLDS_HOWS) <= labels["holds"] / 4, author
        assert f"| {author} | {n} |" in card  # the data card counts every author's triples


def test_a_triple_becomes_a_three_turn_chat_with_its_label(tmp_path: Path) -> None:
    holds_row = {**ROW, "id": "xx-002", "label": "holds", "how": "same_topic"}
    triples = [t for _, t in load_triples(_folder(tmp_path, ROW, holds_row))]
    stale, holds = triple_claims(triples)
    turns = stale["turns"]
    assert isinstance(turns, list)
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"] == BETWEEN
    assert (stale["label"], stale["source_turn_id"]) == (Label.FABRICATED.value, None)
    assert (holds["label"], holds["source_turn_id"]) == (Label.GROUNDED.value, "xx-002-t1")
    assert (stale["phenomenon"], holds["phenomenon"]) == ("stale/new_value", "holds/same_topic")


def test_the_converted_triples_load_as_labelled_examples_of_their_own(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path / "in", ROW, {**ROW, "id": "xx-002", "label": "holds", "how": "restated"}
    )
    out = tmp_path / "set.jsonl"
    assert write_triples_set(folder, out) == 2
    examples = load_examples(out)
    assert [e.claim.claim_id for e in examples] == ["xx-001", "xx-002"]
    # two triples with the same sentences are still two conversations: keyed by their turns' ids
    assert len({e.conversation_id for e in examples}) == 2
    first = examples[0]
    assert [t.role for t in first.turns] == [Role.USER, Role.ASSISTANT, Role.USER]
    assert first.is_oi
    assert examples[1].claim.label.provenance is Provenance.STATED


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"label": "gone"}, "label"),
        ({"how": "restated"}, "not a way a claim is stale"),
        ({"claim": "  "}, "empty"),
        ({"extra": 1}, "extra"),
    ],
)
def test_a_bad_triple_is_refused_naming_its_file_and_line(
    tmp_path: Path, change: dict[str, object], match: str
) -> None:
    folder = _folder(tmp_path, ROW, {**ROW, "id": "xx-002", **change})
    with pytest.raises(InputError, match=match) as err:
        load_triples(folder)
    assert "triples.jsonl:2" in str(err.value)


def test_a_repeated_id_or_an_empty_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="repeated id"):
        load_triples(_folder(tmp_path / "a", ROW, ROW))
    (tmp_path / "b").mkdir()
    with pytest.raises(InputError, match=r"no <author>/triples\.jsonl"):
        load_triples(tmp_path / "b")


def test_eval_suite_scores_the_triples_unless_told_not_to() -> None:
    names = [s.name for s in default_sets()]
    assert STALE_SET in names
    assert STALE_SET not in [s.name for s in default_sets(stale_pairs=False)]
    assert triple_files(stale_pairs_folder())


def test_the_suite_scores_a_folder_of_triples_as_one_set(tmp_path: Path) -> None:
    from mirage_guard.calibration import EvalSet, build_eval_guard, run_suite

    holds_row = {**ROW, "id": "xx-002", "label": "holds", "how": "restated",
                 "later": "Still in Porto, still loving it."}  # fmt: skip
    folder = _folder(tmp_path / "triples", ROW, holds_row)
    guard = build_eval_guard(
        profile_dir=None, writer_model=None, verdicts=None, verdict_model=None,
        verdict_prompt=None,
    )  # fmt: skip
    try:
        (row,) = run_suite(guard, [EvalSet(STALE_SET, folder, origin="held-out")], n_boot=10)
    finally:
        guard.close()
    assert row.set == STALE_SET
    assert row.report.n == 2
    assert row.report.oi_share == 0.5
    assert set(row.report.by_phenomenon) == {"stale/new_value", "holds/restated"}
