"""The hand-written support pairs: schema, train/test sides, how they enter training, the report."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from mirage_guard.calibration import (
    AuthoredPair,
    PairSide,
    authored_side,
    build_pairs,
    load_authored,
    load_examples,
    packaged,
    pair_report,
)
from mirage_guard.calibration._support_authored import side_of
from mirage_guard.calibration._support_pairs import AUTHORED, SupportPair
from mirage_guard.calibration._support_train import balanced
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.evidence import SupportClass


def _line(pid: str, premise: str, claim: str, label: str, case: str = "plain") -> str:
    return json.dumps(
        {"pair_id": pid, "premise": premise, "claim": claim, "label": label, "case": case}
    )


def _write(folder: Path, *lines: str, name: str = "part_x.jsonl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_the_packaged_pairs_load_with_every_class_and_no_repeated_id() -> None:
    pairs = load_authored()
    assert len(pairs) >= 1200
    counts = Counter(p.support for p in pairs)
    assert set(counts) == set(SupportClass)
    assert min(counts.values()) >= 0.1 * len(pairs)
    assert len({p.pair_id for p in pairs}) == len(pairs)


@pytest.mark.parametrize(
    ("folder", "parts", "before"),
    [("next", "efgh", ()), ("round3", "ijkl", ("next",))],
)
def test_the_later_parts_load_apart_from_the_training_parts(
    folder: str, parts: str, before: tuple[str, ...]
) -> None:
    """``next/`` (parts e-h) and ``round3/`` (parts i-l), not trained on by the shipped model,
    each load on their own, with every class and several classes per message, never by
    default, and with ids no other folder uses."""
    trained = load_authored() + [
        p for f in before for p in load_authored(packaged("support_pairs") / f)
    ]
    later = load_authored(packaged("support_pairs") / folder)
    assert len(later) >= 2000
    assert {p.pair_id[:5] for p in later} == {f"sp-{x}-" for x in parts}
    assert not {p.pair_id for p in later} & {p.pair_id for p in trained}
    assert {p.support for p in later} == set(SupportClass)
    classes: dict[str, set[SupportClass]] = {}
    for p in later:
        classes.setdefault(p.premise, set()).add(p.support)
    assert sum(len(c) >= 2 for c in classes.values()) >= 0.8 * len(classes)


def test_the_packaged_pairs_have_several_claims_per_message() -> None:
    """The class must come from comparing claim and message: a message carries several classes."""
    by_premise: dict[str, set[SupportClass]] = {}
    for p in load_authored():
        by_premise.setdefault(p.premise, set()).add(p.support)
    multi = sum(1 for classes in by_premise.values() if len(classes) >= 2)
    assert multi >= 0.8 * len(by_premise)


_EXTRA = {"pair_id": "a", "premise": "x", "claim": "y", "label": "ENTAILED", "case": "plain"}
_EXTRA_FIELD = json.dumps({**_EXTRA, "extra": 1})


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("{not json", "not a support pair"),
        (_line("a", "I'm a nurse", "Is a nurse", "STATED"), "label 'STATED'"),
        (_line("a", "  ", "Is a nurse", "ENTAILED"), "empty premise"),
        (_EXTRA_FIELD, "not a support pair"),
    ],
)
def test_a_bad_line_is_a_typed_error_naming_file_and_line(
    tmp_path: Path, line: str, match: str
) -> None:
    folder = _write(tmp_path / "p", _line("ok", "I'm a nurse", "Is a nurse", "ENTAILED"), line)
    with pytest.raises(InputError, match=match) as err:
        load_authored(folder)
    assert "part_x.jsonl:2" in str(err.value)


def test_a_repeated_pair_id_is_refused(tmp_path: Path) -> None:
    folder = _write(tmp_path / "p", _line("a", "I'm a nurse", "Is a nurse", "ENTAILED"))
    _write(folder, _line("a", "I drive", "Drives", "ENTAILED"), name="part_y.jsonl")
    with pytest.raises(InputError, match=r"repeats part_x\.jsonl:1"):
        load_authored(folder)


def test_every_claim_about_one_message_lands_on_the_same_side() -> None:
    pairs = load_authored()
    sides: dict[str, set[PairSide]] = {}
    for p in pairs:
        sides.setdefault(" ".join(p.premise.lower().split()), set()).add(side_of(p))
    assert all(len(s) == 1 for s in sides.values())
    test = authored_side(pairs, PairSide.TEST)
    assert 0.1 * len(pairs) < len(test) < 0.3 * len(pairs)
    assert not {p.pair_id for p in test} & {p.pair_id for p in authored_side(pairs, PairSide.TRAIN)}


def _pair(pid: str, premise: str, claim: str, cls: SupportClass) -> AuthoredPair:
    return AuthoredPair(pair_id=pid, premise=premise, claim=claim, label=cls.name, case="plain")


def test_authored_pairs_enter_training_with_their_rules_and_are_never_capped() -> None:
    train = load_examples(packaged("claims.jsonl"), split="train")[:30]
    authored = [
        _pair("e", "I'm a nurse on the night shift.", "Works nights as a nurse",
              SupportClass.ENTAILED),
        _pair("u", "I'm a nurse on the night shift.", "Is a nurse in Lisbon",
              SupportClass.UNSUPPORTED),
    ]  # fmt: skip
    pairs = build_pairs(train, authored=authored)
    mine = [p for p in pairs if p.origin.startswith(AUTHORED)]
    assert SupportPair(
        "I'm a nurse on the night shift.", "Works nights as a nurse", SupportClass.ENTAILED,
        AUTHORED + "plain",
    ) in mine  # fmt: skip
    # the rules turn the restatement's message into a question / someone else's fact
    derived = {p.origin for p in mine if p.label is SupportClass.UNSUPPORTED}
    assert {AUTHORED + "question", AUTHORED + "someone_else"} <= derived
    kept = balanced(pairs, max_unsupported=1, seed=0)
    assert Counter(p.origin for p in kept if p.origin.startswith(AUTHORED)) == Counter(
        p.origin for p in mine
    )
    assert sum(1 for p in kept if not p.origin.startswith(AUTHORED)
               and p.label is SupportClass.UNSUPPORTED) == 1  # fmt: skip


class _Fixed:
    """A support model that answers one class per claim text."""

    def __init__(self, answers: dict[str, SupportClass]) -> None:
        self.answers = answers

    def predict_text(self, premises: Sequence[str], claims: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(claims), len(SupportClass)), np.float32)
        for i, c in enumerate(claims):
            out[i, int(self.answers[c])] = 1.0
        return out


def test_the_pair_report_counts_what_the_model_got_right() -> None:
    pairs = [
        _pair("1", "No kids. Just me.", "Has kids", SupportClass.CONTRADICTED),
        _pair("2", "No kids. Just me.", "Does not have children", SupportClass.ENTAILED),
        _pair("3", "No kids. Just me.", "Lives alone", SupportClass.INFERABLE),
        _pair("4", "No kids. Just me.", "Has a dog", SupportClass.UNSUPPORTED),
    ]
    model = _Fixed({
        "Has kids": SupportClass.ENTAILED,  # the mistake a word-overlap reader makes
        "Does not have children": SupportClass.ENTAILED,
        "Lives alone": SupportClass.INFERABLE,
        "Has a dog": SupportClass.UNSUPPORTED,
    })  # fmt: skip
    r = pair_report(model, pairs)
    assert r.n == 4
    assert r.accuracy == pytest.approx(0.75)
    assert r.confusion["contradicted"]["entailed"] == 1
    assert r.per_class["entailed"].precision == pytest.approx(0.5)
    assert r.per_class["contradicted"].recall == 0.0
    assert r.by_case["plain"] == (4, 0.75)
    with pytest.raises(InputError):
        pair_report(model, [])


def test_pair_report_command_reads_the_shipped_model_on_the_test_side(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mirage_guard.adapters.cli import app

    folder = _write(
        tmp_path / "p",
        _line("1", "No kids. Just me.", "Does not have children", "ENTAILED"),
        _line("2", "No kids. Just me.", "Has two kids", "CONTRADICTED", "negation"),
    )
    side = side_of(load_authored(folder)[0]).value
    result = CliRunner().invoke(
        app, ["calibrate", "pair-report", "--pairs", str(folder), "--side", side]
    )
    assert result.exit_code == 0, result.output
    assert f"hand-written pairs, {side} side: n=2 accuracy" in result.output
    assert "negation" in result.output
