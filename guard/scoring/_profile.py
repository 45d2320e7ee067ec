"""Calibration profiles: what a score means, for which writer model, prompt and mode."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, model_validator

from mirage_guard.guard._domain import AuditVerdict, EvidenceLink, Label, QuoteCheck
from mirage_guard.guard.errors import ProfileMismatchError
from mirage_guard.guard.scoring._drift import ScoreDistribution

FloatArray = npt.NDArray[np.float64]


class ProfileMode(StrEnum):
    EVIDENCE = "evidence"  # evidence features only; valid for any writer model
    SELF_AUDIT_SEPARATE = "self_audit_separate"  # + the writer's own labels (second call)
    SELF_AUDIT_INLINE = "self_audit_inline"  # + labels returned by the extraction call

    @property
    def uses_audit(self) -> bool:
        return self is not ProfileMode.EVIDENCE


AUDIT_FEATURES: tuple[str, ...] = (
    "audit_oi",
    "audit_conf_oi",
    "audit_grounded",
    "audit_reasonable",
)


def audit_features(verdict: AuditVerdict) -> dict[str, float]:
    oi = verdict.label.is_over_inference
    return {
        "audit_oi": float(oi),
        # confidence the claim is OI, on one axis: 1.0 = surely OI, 0.0 = surely not
        "audit_conf_oi": verdict.confidence if oi else 1.0 - verdict.confidence,
        "audit_grounded": float(verdict.label is Label.GROUNDED),
        "audit_reasonable": float(verdict.label is Label.INFERRED_REASONABLE),
    }


# the self-audit's quote, scored against the claim with the evidence path (absent from profiles
# fitted before quotes existed: such a profile never trusts a quote)
QUOTE_FEATURES: tuple[str, ...] = (
    "quote_valid",
    "quote_bad",
    "quote_sim",
    "quote_containment",
    "quote_entailed",
)
# a profile trusts a writer's quotes when valid_share x agreement_valid reaches this
MIN_QUOTE_TRUST = 0.5


def quote_features(verdict: AuditVerdict, span: EvidenceLink | None) -> dict[str, float]:
    """The quote of ``verdict`` as features; ``span``: the claim linked to the quoted span alone
    (:func:`~mirage_guard.guard.quote_links`), None unless the quote is valid."""
    valid = verdict.quote_check is QuoteCheck.VALID and span is not None
    f = span.features if valid and span is not None else {}
    return {
        "quote_valid": float(valid),
        "quote_bad": float(verdict.quote_bad),
        "quote_sim": float(span.similarity) if valid and span is not None else 0.0,
        "quote_containment": f.get("lex_containment", 0.0),
        # the support model's P(entailed) of the claim given the span (0 when it did not run)
        "quote_entailed": f.get("sup_entailed", 0.0) if f.get("support_model", 0.0) else 0.0,
    }


class QuoteTrust(BaseModel):
    """How far one writer model's self-audit quotes can be trusted, measured at fit time.

    Among verdicts that quote or must quote (GROUNDED, INFERRED_REASONABLE): the share whose
    quote is a user's words, and how often the label agrees with the truth (over-inference or
    not) when the quote is valid and when it is not. ``trust`` = valid_share x agreement_valid.
    """

    model_config = ConfigDict(frozen=True)

    n: int
    valid_share: float = Field(ge=0.0, le=1.0)
    agreement_valid: float | None = None
    agreement_bad: float | None = None
    trust: float = Field(ge=0.0, le=1.0)
    min_trust: float = Field(default=MIN_QUOTE_TRUST, ge=0.0, le=1.0)

    @property
    def trusted(self) -> bool:
        return self.n > 0 and self.trust >= self.min_trust


class LogisticModel(BaseModel):
    """A standardised logistic regression stored as plain numbers (JSON, no pickles)."""

    model_config = ConfigDict(frozen=True)

    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float

    @model_validator(mode="after")
    def _shapes(self) -> LogisticModel:
        n = len(self.features)
        if not (len(self.mean) == len(self.scale) == len(self.coef) == n):
            raise ValueError("features, mean, scale and coef must have the same length")
        return self

    def matrix(self, rows: Sequence[Mapping[str, float]]) -> FloatArray:
        missing = [f for f in self.features if rows and f not in rows[0]]
        if missing:
            raise KeyError(f"feature(s) missing for this model: {missing[:5]}")
        return np.asarray([[r[f] for f in self.features] for r in rows], dtype=np.float64)

    def predict_proba(self, x: FloatArray) -> FloatArray:
        z = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        logits = z @ np.asarray(self.coef) + self.intercept
        out: FloatArray = 1.0 / (1.0 + np.exp(-np.clip(logits, -50, 50)))
        return out


class DataRef(BaseModel):
    path: str
    sha256: str
    n_examples: int
    split: str


class CalibrationProfile(BaseModel):
    """Keyed by (writer model, prompt version, mode). Never reused for another key."""

    model_config = ConfigDict(frozen=True)

    profile_id: str
    mode: ProfileMode
    writer_model: str | None = Field(description="None only for evidence-only profiles")
    prompt_version: str | None = Field(description="self-audit prompt ref (name@hash)")
    embedder: str
    languages: tuple[str, ...] = Field(
        default=("en",),
        description="ISO 639-1 codes the embedder and features were fitted on; the guard fails "
        "closed on any other language",
    )
    feature_version: str
    support_model: str | None = Field(
        default=None,
        description="sha256 of the claim-support model whose outputs the features hold; the "
        "guard refuses the profile with another one. None in profiles fitted before it was "
        "recorded (not checked)",
    )
    oi_model: LogisticModel
    oi_threshold: float = Field(ge=0.0, le=1.0)
    stated_model: LogisticModel
    stated_threshold: float = Field(ge=0.0, le=1.0)
    objective: str
    metrics: dict[str, float | list[float]] = Field(default_factory=dict)
    fitted_on: DataRef
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    quote_trust: QuoteTrust | None = Field(
        default=None,
        description="how far this writer's self-audit quotes can be trusted; None (profiles "
        "fitted before quotes existed): quotes are not trusted",
    )
    score_distribution: ScoreDistribution | None = Field(
        default=None,
        description="P(over-inference) on the fitting data, binned: live scores are compared "
        "with it (drift); None in profiles fitted before it was stored (drift unknown)",
    )

    @property
    def content_hash(self) -> str:
        """First 12 hex digits of the SHA-256 of this profile's JSON: which version of a
        profile made a decision (a refit keeps the id, never the hash)."""
        return hashlib.sha256(self.model_dump_json().encode("utf-8")).hexdigest()[:12]

    @property
    def trusts_quotes(self) -> bool:
        """A verified quote may let this writer's self-audit count for a claim (not only
        against it): the profile measured the quotes and reads the quote features."""
        return (
            self.quote_trust is not None
            and self.quote_trust.trusted
            and all(f in self.oi_model.features for f in QUOTE_FEATURES)
        )

    @model_validator(mode="after")
    def _keyed(self) -> CalibrationProfile:
        if self.mode.uses_audit and not (self.writer_model and self.prompt_version):
            raise ValueError("a self-audit profile must name its writer model and prompt version")
        if not self.mode.uses_audit and self.writer_model is not None:
            raise ValueError("an evidence-only profile is not tied to a writer model")
        return self

    def check_embedder(self, names: Sequence[str]) -> None:
        """Raise ProfileMismatchError unless fitted with one of ``names`` (an embedder's name,
        and the embedder it stands in for, if it declares one): features of another embedder
        do not mean what this profile's weights and thresholds assume."""
        if self.embedder not in names:
            raise ProfileMismatchError(
                self.profile_id, "embedder", " / ".join(names), self.embedder
            )

    def check_support_model(self, sha256: str | None) -> None:
        """Raise ProfileMismatchError when this profile records the claim-support model it was
        fitted with and ``sha256`` (the one the guard runs) is another: its support features
        would come from a model whose outputs the weights and thresholds never saw."""
        if self.support_model is not None and sha256 is not None and sha256 != self.support_model:
            raise ProfileMismatchError(
                self.profile_id, "support model", sha256[:12], self.support_model[:12]
            )

    def check_features(self, computed: Sequence[str]) -> None:
        """Raise ProfileMismatchError when a model of this profile reads a feature the guard
        does not compute (a profile from another version of the guard, or edited by hand):
        scoring would fail on every write."""
        unknown = sorted(
            {*self.oi_model.features, *self.stated_model.features}.difference(computed)
        )
        if unknown:
            raise ProfileMismatchError(
                self.profile_id, "features", "features this guard computes", ", ".join(unknown)
            )

    def check_applicable(
        self, *, mode: ProfileMode, writer_model: str | None, prompt_version: str | None
    ) -> None:
        """Raise ProfileMismatchError unless this profile was fitted for exactly this key."""
        if self.mode is not mode:
            raise ProfileMismatchError(self.profile_id, "mode", mode.value, self.mode.value)
        if not mode.uses_audit:
            return
        if self.writer_model != writer_model:
            raise ProfileMismatchError(
                self.profile_id, "writer_model", str(writer_model), str(self.writer_model)
            )
        if self.prompt_version != prompt_version:
            raise ProfileMismatchError(
                self.profile_id, "prompt_version", str(prompt_version), str(self.prompt_version)
            )


def feature_version(names: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:12]


def make_profile_id(mode: ProfileMode, writer_model: str | None, prompt_version: str | None) -> str:
    if not mode.uses_audit:
        return "evidence-only"
    safe = (writer_model or "").replace("/", "__").replace(":", "_")
    return f"{safe}--{mode.value}--{(prompt_version or '').split('@')[-1]}"
