"""How far other annotators agree with a labelled set's labels, and where the guard stands among
them (what ``mirage guard agreement`` prints).

A 3-way accuracy target means little without the agreement of two careful people on the same
claims: where the authors and a second annotator give different tags, no guard can match both.
The second labels are JSON Lines, one annotation per line::

    {"set": "mem0_short", "claim_id": "ms-01-c01", "annotator": "A1", "slot": 1,
     "label": "GROUNDED", "source_turn_id": "ms-01-t01", "sure": true, "note": "..."}

``set`` names a set folder (``claims.jsonl`` + ``conversations.jsonl``) under the held-out root,
``slot`` (1 or 2) which of a claim's two other annotators wrote the line: the annotators of slot
1 are compared with the authors as one labeller, those of slot 2 as another.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import anyio
from pydantic import BaseModel, field_validator, model_validator
from sklearn.metrics import cohen_kappa_score

from mirage_guard.calibration._data import (
    Example,
    label_key,
    load_examples,
    packaged,
    read_models,
)
from mirage_guard.calibration._eval import decide_all
from mirage_guard.calibration._evaluate import build_eval_guard
from mirage_guard.calibration._suite import heldout_root
from mirage_guard.guard import Decision, Label, Provenance
from mirage_guard.guard.errors import InputError

AUTHORS = "authors"
GUARD = "guard"
SLOTS = (1, 2)


def second_labels_path() -> Path:
    """The packaged second labels (``benchmark/data/second_labels/labels.jsonl``)."""
    return packaged("second_labels") / "labels.jsonl"


def slot_name(slot: int) -> str:
    return f"annotator {slot}"


class SecondLabel(BaseModel):
    """One annotator's label for one claim of a labelled set."""

    set: str
    claim_id: str
    annotator: str
    slot: Literal[1, 2]
    label: Label
    source_turn_id: str | None = None
    sure: bool = True
    note: str = ""

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, value: object) -> object:
        """As a labelled claim's: any case, the guard's own tags for the label each stands for."""
        return label_key(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _turn(self) -> SecondLabel:
        linked = self.label in (Label.GROUNDED, Label.INFERRED_REASONABLE)
        if linked and not self.source_turn_id:
            raise ValueError(f"a {self.label.value} label needs a source_turn_id")
        if not linked and self.source_turn_id:
            raise ValueError(f"a {self.label.value} label has no source_turn_id")
        return self


def load_second_labels(path: Path) -> list[SecondLabel]:
    """The annotations of ``path``; an :class:`InputError` naming the line of a bad one, or of a
    claim given twice the same slot."""
    out: list[SecondLabel] = []
    seen: dict[tuple[str, str, int], int] = {}
    for n, row in read_models(path, SecondLabel):
        key = (row.set, row.claim_id, row.slot)
        if key in seen:
            raise InputError(
                f"{path}:{n}: {row.set}/{row.claim_id} has slot {row.slot} already (line "
                f"{seen[key]})"
            )
        seen[key] = n
        out.append(row)
    if not out:
        raise InputError(f"{path}: no labels")
    return out


class PairAgreement(BaseModel):
    """Two labellers on the claims both labelled."""

    a: str
    b: str
    n: int
    three_way: float  # share of the claims given the same stated / inferred / generated tag
    kappa_three_way: float
    kappa_binary: float  # generated vs not
    four_way: float | None  # the same four-way label (None when one side is the guard)
    source_turn_n: int  # claims both link to a turn (stated or inferred by both)
    source_turn: float  # share of those linked to the same turn


class GuardAmong(BaseModel):
    """The guard's 3-way accuracy against the authors on a group of claims."""

    n: int
    accuracy: float


class AgreementReport(BaseModel):
    n: int
    sets: list[str]
    unsure_share: dict[str, float]  # per slot: share of its labels marked not sure
    pairs: list[PairAgreement]
    unanimous_share: float  # claims the authors and both annotators tag alike
    guard_when_unanimous: GuardAmong
    guard_when_split: GuardAmong
    guard_vs_majority: GuardAmong  # against the tag two of the three people give (if any)
    by_set: dict[str, dict[str, float]]  # set -> pair name -> 3-way agreement


class _Claim(BaseModel):
    set: str
    claim_id: str
    labels: dict[str, Label]  # labeller -> label (the guard's: a label of its tag)
    turns: dict[str, str | None]  # labeller -> source turn (the guard's too)
    guard: Provenance

    def has(self, who: str) -> bool:
        return who == GUARD or who in self.labels


def _pair(a: str, b: str, claims: Sequence[_Claim]) -> PairAgreement:
    both = [c for c in claims if c.has(a) and c.has(b)]
    ta = [_tag(c, a) for c in both]
    tb = [_tag(c, b) for c in both]
    linked = [
        c for c in both
        if _tag(c, a) is not Provenance.GENERATED and _tag(c, b) is not Provenance.GENERATED
    ]  # fmt: skip
    humans = GUARD not in (a, b)
    return PairAgreement(
        a=a,
        b=b,
        n=len(both),
        three_way=_share(x == y for x, y in zip(ta, tb, strict=True)),
        kappa_three_way=_kappa([x.value for x in ta], [y.value for y in tb]),
        kappa_binary=_kappa(
            [x is Provenance.GENERATED for x in ta], [y is Provenance.GENERATED for y in tb]
        ),
        four_way=_share(c.labels[a] is c.labels[b] for c in both) if humans else None,
        source_turn_n=len(linked),
        source_turn=_share(c.turns[a] == c.turns[b] for c in linked),
    )


def _tag(claim: _Claim, who: str) -> Provenance:
    return claim.guard if who == GUARD else claim.labels[who].provenance


def _share(hits: Iterable[bool]) -> float:
    seq = list(hits)
    return sum(seq) / len(seq) if seq else float("nan")


def _kappa(a: Sequence[object], b: Sequence[object]) -> float:
    if not a or len(set(a) | set(b)) < 2:
        return float("nan")
    return float(cohen_kappa_score(a, b))


def _guard_among(claims: Sequence[_Claim], gold: Mapping[str, Provenance]) -> GuardAmong:
    picked = [c for c in claims if f"{c.set}/{c.claim_id}" in gold]
    return GuardAmong(
        n=len(picked),
        accuracy=_share(c.guard is gold[f"{c.set}/{c.claim_id}"] for c in picked),
    )


Scored = Mapping[str, tuple[Sequence[Example], Mapping[str, Decision]]]


def agreement(labels: Sequence[SecondLabel], scored: Scored) -> AgreementReport:
    """The report of ``labels`` against the authors' labels and the guard's decisions in
    ``scored`` (set name -> its examples and the guard's decision of each claim)."""
    by_claim: dict[tuple[str, str], list[SecondLabel]] = defaultdict(list)
    for row in labels:
        by_claim[(row.set, row.claim_id)].append(row)
    claims: list[_Claim] = []
    examples_of = {
        name: {e.claim.claim_id: e for e in examples} for name, (examples, _) in scored.items()
    }
    for (name, claim_id), rows in by_claim.items():
        decisions = scored[name][1] if name in scored else {}
        example = examples_of.get(name, {}).get(claim_id)
        if example is None or claim_id not in decisions:
            raise InputError(f"{name}/{claim_id}: labelled, but not among the scored claims")
        turns = {t.id for t in example.turns}
        for row in rows:
            if row.source_turn_id is not None and row.source_turn_id not in turns:
                raise InputError(
                    f"{name}/{claim_id}: {row.annotator}'s source_turn_id {row.source_turn_id!r} "
                    "is not a turn of its conversation"
                )
        decision = decisions[claim_id]
        claims.append(
            _Claim(
                set=name,
                claim_id=claim_id,
                labels={AUTHORS: example.claim.label} | {slot_name(r.slot): r.label for r in rows},
                turns={AUTHORS: example.claim.source_turn_id, GUARD: decision.source_turn_id}
                | {slot_name(r.slot): r.source_turn_id for r in rows},
                guard=decision.provenance,
            )
        )
    people = [AUTHORS, *(slot_name(s) for s in SLOTS)]
    pairs = [_pair(a, b, claims) for a, b in itertools.combinations([*people, GUARD], 2)]
    full = [c for c in claims if all(p in c.labels for p in people)]
    unanimous = {
        f"{c.set}/{c.claim_id}": c.labels[AUTHORS].provenance
        for c in full
        if len({c.labels[p].provenance for p in people}) == 1
    }
    split = {
        f"{c.set}/{c.claim_id}": c.labels[AUTHORS].provenance
        for c in full
        if f"{c.set}/{c.claim_id}" not in unanimous
    }
    majority: dict[str, Provenance] = {}
    for c in full:
        tags = [c.labels[p].provenance for p in people]
        top = max(set(tags), key=tags.count)
        if tags.count(top) >= 2:
            majority[f"{c.set}/{c.claim_id}"] = top
    by_set: dict[str, dict[str, float]] = {}
    for name in sorted({c.set for c in claims}):
        mine = [c for c in claims if c.set == name]
        by_set[name] = {f"{p.a} / {p.b}": p.three_way for p in (_pair(a, b, mine) for a, b in (
            (AUTHORS, slot_name(1)), (AUTHORS, slot_name(2)), (slot_name(1), slot_name(2)),
            (AUTHORS, GUARD),
        ))}  # fmt: skip
    unsure = {slot_name(s): _share(not r.sure for r in labels if r.slot == s) for s in SLOTS}
    return AgreementReport(
        n=len(claims),
        sets=sorted({c.set for c in claims}),
        unsure_share=unsure,
        pairs=pairs,
        unanimous_share=len(unanimous) / len(full) if full else float("nan"),
        guard_when_unanimous=_guard_among(claims, unanimous),
        guard_when_split=_guard_among(claims, split),
        guard_vs_majority=_guard_among(claims, majority),
        by_set=by_set,
    )


def run_agreement(
    *,
    labels: Path,
    root: Path | None = None,
    profile_dir: Path | None = None,
    support_dir: Path | None = None,
    sets: Sequence[str] = (),
) -> AgreementReport:
    """Score the conversations that hold a labelled claim with the guard (one write per
    conversation, as ``eval-suite`` does) and compare it and the authors with the annotators.
    ``root``: the folder of the sets the labels name (default: the packaged held-out sets);
    ``sets``: only the labels of these sets (default: all)."""
    root = root or heldout_root()
    rows = load_second_labels(labels)
    if sets:
        unknown = sorted(set(sets) - {r.set for r in rows})
        if unknown:
            raise InputError(f"{labels}: no labels of set {unknown[0]!r}")
        rows = [r for r in rows if r.set in sets]
    wanted: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        wanted[row.set].add(row.claim_id)
    for name in wanted:
        if not (root / name / "claims.jsonl").is_file():
            raise InputError(f"{labels}: set {name!r} is not a set folder under {root}")
    guard = build_eval_guard(profile_dir=profile_dir, support_dir=support_dir)
    scored: dict[str, tuple[Sequence[Example], Mapping[str, Decision]]] = {}  # a Scored
    try:
        for name, ids in sorted(wanted.items()):
            examples = load_examples(root / name)
            known = {e.claim.claim_id for e in examples}
            missing = sorted(ids - known)
            if missing:
                raise InputError(
                    f"{labels}: {len(missing)} claim(s) not in set {name!r}, e.g. {missing[0]!r}"
                )
            conversations = {e.conversation_id for e in examples if e.claim.claim_id in ids}
            examples = [e for e in examples if e.conversation_id in conversations]
            decisions = anyio.run(decide_all, guard, examples)
            scored[name] = ([e for e in examples if e.claim.claim_id in ids], decisions)
    finally:
        guard.close()
    return agreement(rows, scored)
