"""Schema of the packaged MirageBench data (benchmark/data/personas.jsonl and claims.jsonl).

The rules are those of benchmark/data/authoring/SPEC.md; the evaluation and the shipped
evidence-only profile depend on them.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from functools import cache
from typing import Any

import pytest

from mirage_guard.calibration._data import packaged
from mirage_guard.guard import Label

GROUPS = {"stereotypical": "st", "counter": "ct", "neutral": "nt"}
PROFILE_KEYS = {
    "name", "age", "gender", "occupation", "city", "education", "relationship_status",
    "living_situation", "hobbies", "personality", "political_leaning", "religion", "diet",
    "pets", "home_style",
}  # fmt: skip
TASKS = {"gift", "dating", "itinerary", "stressor", "letter", "apartment"}
KINDS = {
    "occupation", "hobby", "pet", "demographics", "personality", "politics", "religion",
    "relationships", "possessions", "home", "routine", "health", "finance", "preference",
    "location", "education", "event",
}  # fmt: skip
LINKED = {Label.GROUNDED.value, Label.INFERRED_REASONABLE.value}


@cache
def _rows(name: str) -> tuple[dict[str, Any], ...]:
    text = packaged(name).read_text(encoding="utf-8")
    return tuple(json.loads(line) for line in text.splitlines() if line.strip())


def personas() -> tuple[dict[str, Any], ...]:
    return _rows("personas.jsonl")


def claims() -> tuple[dict[str, Any], ...]:
    return _rows("claims.jsonl")


def by_persona() -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in claims():
        out[c["persona_id"]].append(c)
    return out


# ----------------------------------------------------------------- personas


def test_150_personas_50_per_group_with_group_ids() -> None:
    ps = personas()
    assert len(ps) == 150
    assert Counter(p["group"] for p in ps) == dict.fromkeys(GROUPS, 50)
    ids = [p["persona_id"] for p in ps]
    assert len(set(ids)) == 150
    for p in ps:
        prefix = GROUPS[p["group"]]
        assert re.fullmatch(rf"{prefix}-0(0[1-9]|[1-4]\d|50)", p["persona_id"]), p["persona_id"]


def test_profiles_have_exactly_the_15_keys() -> None:
    for p in personas():
        profile = p["profile"]
        assert set(profile) == PROFILE_KEYS, p["persona_id"]
        assert type(profile["age"]) is int, p["persona_id"]
        assert 16 <= profile["age"] <= 100, p["persona_id"]
        for key, value in profile.items():
            if key != "age":
                assert isinstance(value, str), (p["persona_id"], key)
                assert value.strip(), (p["persona_id"], key)


def test_exactly_three_revealed_facts_with_turn_ids() -> None:
    for p in personas():
        pid = p["persona_id"]
        facts = p["revealed_facts"]
        assert [f["turn_id"] for f in facts] == [f"{pid}-t1", f"{pid}-t2", f"{pid}-t3"]
        texts = [f["text"].strip() for f in facts]
        assert all(texts), pid
        assert len(set(texts)) == 3, pid


# ----------------------------------------------------------------- claims


def test_at_least_1500_claims_with_unique_ids_and_known_personas() -> None:
    cs = claims()
    assert len(cs) >= 1500
    ids = [c["claim_id"] for c in cs]
    assert len(set(ids)) == len(ids)
    known = {p["persona_id"] for p in personas()}
    for c in cs:
        assert c["persona_id"] in known, c["claim_id"]
        assert c["claim_id"].startswith(c["persona_id"] + "-c"), c["claim_id"]
        assert c["text"].strip(), c["claim_id"]


def test_labels_tasks_and_kinds_are_valid() -> None:
    labels = {lbl.value for lbl in Label}
    for c in claims():
        assert c["label"] in labels, c["claim_id"]
        assert c["task"] in TASKS, c["claim_id"]
        assert c["attribute_kind"] in KINDS, c["claim_id"]


def test_source_turn_rules() -> None:
    for c in claims():
        if c["label"] in LINKED:
            turns = {f"{c['persona_id']}-t{i}" for i in (1, 2, 3)}
            assert c["source_turn_id"] in turns, c["claim_id"]
        else:
            assert c["source_turn_id"] is None, c["claim_id"]


def test_over_inference_share_and_both_oi_classes() -> None:
    counts = Counter(c["label"] for c in claims())
    n = sum(counts.values())
    oi = counts[Label.INFERRED_STEREOTYPE.value] + counts[Label.FABRICATED.value]
    assert 0.35 <= oi / n <= 0.50
    assert counts[Label.INFERRED_STEREOTYPE.value] / n >= 0.10
    assert counts[Label.FABRICATED.value] / n >= 0.10
    # the non-OI classes are there too, or the stated/inferred split could not be learnt
    assert counts[Label.GROUNDED.value] / n >= 0.10
    assert counts[Label.INFERRED_REASONABLE.value] / n >= 0.10


def test_every_task_is_represented() -> None:
    counts = Counter(c["task"] for c in claims())
    assert set(counts) == TASKS
    assert min(counts.values()) >= 50


def test_every_persona_has_10_to_12_claims_over_at_least_4_tasks() -> None:
    groups = by_persona()
    assert set(groups) == {p["persona_id"] for p in personas()}
    for pid, cs in groups.items():
        assert 10 <= len(cs) <= 12, pid
        assert len({c["task"] for c in cs}) >= 4, pid


def test_train_dev_split_is_by_persona() -> None:
    splits: dict[str, set[str]] = defaultdict(set)
    for c in claims():
        assert c["split"] in {"train", "dev"}, c["claim_id"]
        splits[c["persona_id"]].add(c["split"])
    leaking = sorted(pid for pid, s in splits.items() if len(s) > 1)
    assert leaking == []
    dev = {pid for pid, s in splits.items() if s == {"dev"}}
    train = {pid for pid, s in splits.items() if s == {"train"}}
    assert dev
    assert train
    assert dev.isdisjoint(train)
    # every group is in the dev split, so the dev figure is not about one group only
    groups = {p["persona_id"]: p["group"] for p in personas()}
    assert {groups[pid] for pid in dev} == set(GROUPS)


@pytest.mark.parametrize("split", ["train", "dev"])
def test_each_split_has_both_oi_and_non_oi(split: str) -> None:
    labels = Counter(c["label"] for c in claims() if c["split"] == split)
    assert set(labels) == {lbl.value for lbl in Label}
