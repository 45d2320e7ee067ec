"""Merge the authoring parts into benchmark/data/{personas,claims}.jsonl and assign the split.

Run: python benchmark/data/authoring/merge.py
Split (by persona, stratified by group): persona numbers ending in 3 or 8 -> "dev" (20 %),
the rest -> "train". Claims inherit their persona's split.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent
GROUP_ORDER = {"stereotypical": 0, "counter": 1, "neutral": 2}


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
