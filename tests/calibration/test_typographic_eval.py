"""The shipped guard decides the same whether apostrophes are typed "'" or "’".

Phones and word processors type "I don’t eat meat". Before the evidence path read both alike,
"don’t" was two words ("don", "t"), no denial, and on held-out sets typed that way the guard
stored more fabrications as stated facts. Authored here: a small set with the apostrophes the
word rules read (negations, contractions, possessives)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mirage_guard.calibration import run_eval

pytestmark = pytest.mark.slow

_TURNS = [
    {"id": "t1", "role": "user", "content": "I don't eat meat, I'm vegan since last year."},
    {"id": "t2", "role": "assistant", "content": "Good to know! Any favourite dishes?"},
    {
        "id": "t3",
        "role": "user",
        "content": "My sister's a chef, she's the one who cooks. I'm hopeless.",
    },
    {
        "id": "t4",
        "role": "user",
        "content": "We didn't move to Leeds in the end, we're still in Hull.",
    },
]
_CLAIMS = [
    ("c1", "Eats meat", "FABRICATED", None),
    ("c2", "Is vegan", "GROUNDED", "t1"),
    ("c3", "Works as a chef", "FABRICATED", None),
    ("c4", "Lives in Leeds", "FABRICATED", None),
    ("c5", "Lives in Hull", "GROUNDED", "t4"),
    ("c6", "Doesn't eat meat", "GROUNDED", "t1"),
]


def test_typed_apostrophes_move_no_decision(tmp_path: Path) -> None:
    data = tmp_path / "claims.jsonl"
    data.write_text(
        "\n".join(
            json.dumps(
                {
                    "claim_id": cid,
                    "text": text,
                    "label": label,
                    "source_turn_id": src,
                    "turns": _TURNS,
                }
            )
            for cid, text, label, src in _CLAIMS
        )
    )
    rows = {}
    for typed in (False, True):
        out = tmp_path / f"rows-{typed}.jsonl"
        report = run_eval(data=data, personas=None, split=None, n_boot=10, per_claim=out,
                          typographic=typed)  # fmt: skip
        assert report.data.endswith(" (typographic)") is typed
        rows[typed] = [json.loads(line) for line in out.read_text().splitlines()]
    keep = ("claim_id", "provenance", "action", "source_turn_id")
    assert [{k: r[k] for k in keep} for r in rows[True]] == [
        {k: r[k] for k in keep} for r in rows[False]
    ]
    as_typed = {r["claim_id"]: r for r in rows[True]}
    assert as_typed["c1"]["provenance"] == "generated"  # "I don’t eat meat" denies it
    assert as_typed["c1"]["text"] == "Eats meat"
