"""A decision as the guard would log it, for tests of the decision log and what reads it."""

from __future__ import annotations

from mirage_guard.guard import Action, Candidate, Decision, Provenance, Reason

# the action the shipped policy takes for each provenance
DEFAULT_ACTION = {
    Provenance.STATED: Action.STORE,
    Provenance.INFERRED: Action.STORE_AS_HYPOTHESIS,
    Provenance.GENERATED: Action.QUARANTINE,
}


def logged_decision(
    text: str,
    provenance: Provenance,
    turn: str | None,
    *,
    action: Action | None = None,
    reasons: list[Reason | str] | None = None,
) -> Decision:
    """A scored decision (score 0.3, threshold 0.5, the evidence-only profile) on ``text``."""
    return Decision(
        candidate=Candidate(text=text),
        provenance=provenance,
        action=action or DEFAULT_ACTION[provenance],
        source_turn_id=turn,
        similarity=0.5,
        evidence_span=None,
        score=0.3,
        threshold=0.5,
        profile_id="evidence-only",
        calibrated=True,
        reasons=reasons if reasons is not None else ["because"],
    )
