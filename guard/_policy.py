"""Provenance -> action. Configurable, and closed by default when in doubt."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, field_validator

from mirage_guard.guard._domain import Action, Provenance


class Policy(BaseModel):
    model_config = ConfigDict(frozen=True)

    inferred_action: Action = Action.STORE_AS_HYPOTHESIS
    generated_action: Action = Action.QUARANTINE

    @field_validator("inferred_action")
    @classmethod
    def _inferred(cls, v: Action) -> Action:
        if v not in (Action.STORE_AS_HYPOTHESIS, Action.QUARANTINE):
            raise ValueError("inferred candidates are stored as hypotheses or quarantined")
        return v

    @field_validator("generated_action")
    @classmethod
    def _generated(cls, v: Action) -> Action:
        if v not in (Action.QUARANTINE, Action.BLOCK):
            raise ValueError("generated candidates are quarantined or blocked")
        return v

    def action_for(self, provenance: Provenance) -> Action:
        if provenance is Provenance.STATED:
            return Action.STORE
        if provenance is Provenance.INFERRED:
            return self.inferred_action
        return self.generated_action
