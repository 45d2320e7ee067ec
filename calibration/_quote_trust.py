"""How far a writer model's self-audit quotes can be trusted, measured on labelled claims.

Fitted next to the logistic models of a per-model profile (``mirage calibrate fit``) and stored in
it (:class:`~mirage_guard.guard.scoring.QuoteTrust`). A writer that invents quotes or quotes the
assistant gets a low ``valid_share``; one whose labels are wrong even when the quote is real gets
a low ``agreement_valid``; either keeps ``trust`` below the profile's ``min_trust``, and then the
guard lets that writer's self-audit only make decisions more cautious.
"""

from __future__ import annotations

from collections.abc import Sequence

from mirage_guard.guard import AuditVerdict, QuoteCheck
from mirage_guard.guard.scoring import MIN_QUOTE_TRUST, QuoteTrust

# labels that must quote the user; any verdict that gives a quote is judged on it too
_NEEDS_QUOTE = ("GROUNDED", "INFERRED_REASONABLE")


def _claims_a_quote(v: AuditVerdict) -> bool:
    return v.label.value in _NEEDS_QUOTE or v.quote_check is not QuoteCheck.MISSING


def _agreement(pairs: Sequence[tuple[AuditVerdict, int]]) -> float | None:
    if not pairs:
        return None
    return sum(int(v.label.is_over_inference) == y for v, y in pairs) / len(pairs)


def fit_quote_trust(
    verdicts: Sequence[AuditVerdict], y_oi: Sequence[int], *, min_trust: float = MIN_QUOTE_TRUST
) -> QuoteTrust:
    """``verdicts`` (quotes checked) aligned with ``y_oi`` (1 = the claim is over-inference)."""
    if len(verdicts) != len(y_oi):
        raise ValueError("verdicts and labels must be aligned")
    quoting = [(v, int(y)) for v, y in zip(verdicts, y_oi, strict=True) if _claims_a_quote(v)]
    valid = [(v, y) for v, y in quoting if v.quote_check is QuoteCheck.VALID]
    bad = [(v, y) for v, y in quoting if v.quote_bad]
    share = len(valid) / len(quoting) if quoting else 0.0
    agree_valid = _agreement(valid)
    return QuoteTrust(
        n=len(quoting),
        valid_share=round(share, 6),
        agreement_valid=None if agree_valid is None else round(agree_valid, 6),
        agreement_bad=None if (a := _agreement(bad)) is None else round(a, 6),
        trust=round(share * (agree_valid or 0.0), 6),
        min_trust=min_trust,
    )
