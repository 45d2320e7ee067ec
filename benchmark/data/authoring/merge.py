"""Merge the authoring parts into benchmark/data/{personas,claims}.jsonl and assign the split.

Run: python benchmark/data/authoring/merge.py
Split (by persona, stratified by group): persona numbers ending in 3 or 8 -> "dev" (20 %),
the rest -> "train". Claims inherit their persona's split.

Twins (``partK_twins.jsonl``: ``claim_id``, ``text_flat``, ``text_hedged``, written by hand) are
attached to their claims, and the claim's ``text`` is re-balanced so that hedging cannot predict
the label: in every label, the same share of claims (``HEDGED_SHARE``) takes the hedged twin and the
rest the flat one, chosen by a hash of the claim id (stable, not by author or persona).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent
GROUP_ORDER = {"stereotypical": 0, "counter": 1, "neutral": 2}
HEDGED_SHARE = 1 / 3


def _rank(claim_id: object) -> str:
    return hashlib.sha256(str(claim_id).encode()).hexdigest()


def attach_twins(claims: list[dict[str, object]]) -> None:
    twins: dict[str, dict[str, str]] = {}
    for part in sorted(HERE.glob("part*_twins.jsonl")):
        for line in part.read_text().splitlines():
            if line.strip():
                t = json.loads(line)
                twins[t["claim_id"]] = t
    if not twins:
        return
    by_label: dict[str, list[dict[str, object]]] = {}
    for c in claims:
        t = twins.get(str(c["claim_id"]))
        if t is None:
            continue
        c["text_flat"], c["text_hedged"] = t["text_flat"], t["text_hedged"]
        by_label.setdefault(str(c["label"]), []).append(c)
    for group in by_label.values():
        group.sort(key=lambda c: _rank(c["claim_id"]))
        n_hedged = round(len(group) * HEDGED_SHARE)
        for i, c in enumerate(group):
            c["text"] = c["text_hedged"] if i < n_hedged else c["text_flat"]


def split_of(persona_id: str) -> str:
    return "dev" if int(persona_id.split("-")[1]) % 5 == 3 else "train"


def main() -> int:
    personas: list[dict[str, object]] = []
    claims: list[dict[str, object]] = []
    for part in sorted(HERE.glob("part*_personas.jsonl")):
        personas += [json.loads(line) for line in part.read_text().splitlines() if line.strip()]
    for part in sorted(HERE.glob("part*_claims.jsonl")):
        claims += [json.loads(line) for line in part.read_text().splitlines() if line.strip()]
    personas.sort(key=lambda p: (GROUP_ORDER[str(p["group"])], str(p["persona_id"])))
    ids = [p["persona_id"] for p in personas]
    if len(ids) != len(set(ids)):
        print("duplicate persona ids", file=sys.stderr)
        return 1
    order = {pid: i for i, pid in enumerate(ids)}
    claims = [c for c in claims if c["persona_id"] in order]
    claims.sort(key=lambda c: (order[c["persona_id"]], str(c["claim_id"])))
    for c in claims:
        c["split"] = split_of(str(c["persona_id"]))
    attach_twins(claims)
    with (OUT / "personas.jsonl").open("w") as f:
        for p in personas:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    with (OUT / "claims.jsonl").open("w") as f:
        for c in claims:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(f"{len(personas)} personas, {len(claims)} claims")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
