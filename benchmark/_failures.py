"""Failed units stay visible: the share of units that failed, per model called and stage.

OI is computed from the units that succeeded; a failed unit (answer cut at ``max_tokens``,
unparsable, refused, provider error) has no claims. Long answers carry the most claims, so a
high failed share biases OI (usually down); the report prints this table next to the figures.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel

from mirage_guard.benchmark._records import JudgeRecord, Record

TRUNCATED_ERROR = "TruncatedOutputError"
UNPARSABLE_ERROR = "UnparsableOutputError"


class FailureRow(BaseModel):
    """Units of one stage run by one model: how many, how many failed and why (latest try)."""

    model: str
    stage: str
    units: int
    failed: int
    truncated: int
    unparsable: int
    other: int
    retried_units: int

    @property
    def failed_pct(self) -> float:
        return 100.0 * self.failed / self.units if self.units else float("nan")


def called_model(record: Record) -> str:
    """The model whose call the unit made (the judge for judge records)."""
    return record.judge if isinstance(record, JudgeRecord) else record.model


def failure_rows(records: Iterable[Record]) -> list[FailureRow]:
    """One row per (model called, stage) from the latest record of every unit."""
    groups: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for r in records:
        groups[(called_model(r), r.kind)].append(r)
    rows = []
    for (model, stage), group in sorted(groups.items()):
        errors = [r.error.type for r in group if r.error is not None]
        rows.append(
            FailureRow(
                model=model,
                stage=stage,
                units=len(group),
                failed=len(errors),
                truncated=errors.count(TRUNCATED_ERROR),
                unparsable=errors.count(UNPARSABLE_ERROR),
                other=sum(1 for e in errors if e not in (TRUNCATED_ERROR, UNPARSABLE_ERROR)),
                retried_units=sum(1 for r in group if r.attempt > 1),
            )
        )
    return rows
