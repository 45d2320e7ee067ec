"""BEGIN (Dziri et al., TACL 2022) -> labelled claims: grounding data nobody on this project wrote.

The TSV's rows are knowledge-grounded dialogue responses judged against an evidence passage. As
the data's README says: ``entailment`` -> GROUNDED with the evidence as the supporting *user* turn;
``hallucination`` and ``contradiction`` -> FABRICATED; ``generic`` and ``off-topic`` are dropped.
The dialogue partner's previous turn is kept as an assistant turn: context, never evidence.
The data is read where it lies (``../shared/data/begin/``, CC BY 4.0) and never copied here.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

from mirage_guard.calibration._eval import check_not_an_input, check_writable, write_whole
from mirage_guard.guard import Label
from mirage_guard.guard.errors import InputError

BEGIN_LABELS: dict[str, Label | None] = {
    "entailment": Label.GROUNDED,
    "hallucination": Label.FABRICATED,
    "contradiction": Label.FABRICATED,
    "generic": None,
    "off-topic": None,
}
_COLUMNS = ("evidence", "previous turn", "response", "gold label")


def convert_begin(tsv: Path) -> tuple[list[dict[str, object]], Counter[str]]:
    """Claims (the inline-turns format of `mirage guard eval`) and the count per BEGIN label."""
    try:
        with tsv.open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    except OSError as exc:
        raise InputError(f"cannot read {tsv}: {exc}") from exc
    if not rows or any(c not in rows[0] for c in _COLUMNS):
        raise InputError(f"{tsv}: not a BEGIN TSV (needs columns {', '.join(_COLUMNS)})")
    claims: list[dict[str, object]] = []
    seen: Counter[str] = Counter()
    for n, row in enumerate(rows, 1):
        gold = (row["gold label"] or "").strip()
        if gold not in BEGIN_LABELS:
            raise InputError(f"{tsv}:{n + 1}: unknown BEGIN label {gold!r}")
        seen[gold] += 1
        label = BEGIN_LABELS[gold]
        response = (row["response"] or "").strip()
        if label is None or not response:
            continue
        base = f"begin-{n:04d}"
        turns = [
            {"id": f"{base}-t1", "role": "assistant", "content": row["previous turn"] or ""},
            {"id": f"{base}-t2", "role": "user", "content": row["evidence"] or ""},
        ]
        claims.append(
            {
                "claim_id": base,
                "text": response,
                "label": label.value,
                "source_turn_id": f"{base}-t2" if label is Label.GROUNDED else None,
                "turns": turns,
                "phenomenon": gold,
            }
        )
    return claims, seen


def write_begin(tsv: Path, out: Path) -> tuple[int, Counter[str]]:
    """BEGIN's rows as labelled claims in ``out``, written whole (never over the TSV itself)."""
    check_not_an_input(out, [tsv], "the claims")
    check_writable(out, "the claims")
    claims, seen = convert_begin(tsv)
    write_whole(out, (json.dumps(c, ensure_ascii=False) for c in claims), "the claims")
    return len(claims), seen
