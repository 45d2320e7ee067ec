"""Provenance -> action. Configurable, and closed by default when in doubt."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from mirage_guard.guard._domain import Action, Provenance

# what each provenance may be configured to do: never store an inference or a generation as fact
ALLOWED_ACTIONS: dict[str, frozenset[Action]] = {
    "inferred_action": frozenset({Action.STORE_AS_HYPOTHESIS, Action.QUARANTINE}),
    "generated_action": frozenset({Action.QUARANTINE, Action.BLOCK}),
}


def check_action(field: str, value: Action) -> Action:
    """The one rule behind the policy and the settings: a ``ValueError`` names what is allowed."""
    allowed = ALLOWED_ACTIONS[field]
    if value not in allowed:
        names = " or ".join(sorted(a.value for a in allowed))
        raise ValueError(f"{field} must be {names}")
    return value


class Policy(BaseModel):
    model_config = ConfigDict(frozen=True)

    inferred_action: Action = Action.STORE_AS_HYPOTHESIS
    generated_action: Action = Action.QUARANTINE
    # a floor on the profile's P(stated) for a stated fact (None: the profile's threshold alone);
    # below it a claim the score alone would store as stated is an inference (a hypothesis)
    stated_min: float | None = Field(default=None, ge=0.0, le=1.0)

    @field_validator("inferred_action", "generated_action")
    @classmethod
    def _allowed(cls, v: Action, info: ValidationInfo) -> Action:
        return check_action(str(info.field_name), v)

    def stated_threshold(self, profile_threshold: float) -> float:
        """The P(stated) a claim needs to be stored as stated on its score: the profile's
        threshold, or this policy's floor when that is higher."""
        if self.stated_min is None:
            return profile_threshold
        return max(profile_threshold, self.stated_min)

    def action_for(self, provenance: Provenance) -> Action:
        if provenance is Provenance.STATED:
            return Action.STORE
        if provenance is Provenance.INFERRED:
            return self.inferred_action
        return self.generated_action
