"""Domain model of a guarded memory write (typed at every boundary)."""

from __future__ import annotations

import unicodedata
import uuid
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from mirage_guard.guard._reasons import Reason, as_reasons


def well_formed(text: str) -> bool:
    """Whether ``text`` is Unicode that can be stored: no lone surrogate (``"\\ud83d"``, half
    an emoji, as a JSON escape or a cut string leaves it), which no store can encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _well_formed(text: str) -> str:
    if not well_formed(text):
        raise ValueError("is not well-formed Unicode (it holds a lone surrogate, half a character)")
    return text


# pydantic refuses a lone surrogate in a constrained str itself ("unable to parse raw data")
NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


def has_text(text: str) -> bool:
    """Whether ``text`` says anything: a letter or a digit of any script. Whitespace, invisible
    characters (zero-width spaces, a byte-order mark) and punctuation alone say nothing, so no
    fact can rest on them ("\u200b" or "." was stored as a stated fact; `str.strip` keeps both)."""
    return any(unicodedata.category(c)[0] in "LN" for c in text)


def _says_something(text: str) -> str:
    if not has_text(text):
        raise ValueError("has no letter or digit: it states nothing")
    return text


# a candidate fact: it must say something
FactText = Annotated[NonEmpty, AfterValidator(_says_something)]


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class Label(StrEnum):
    """The four-way MirageBench taxonomy."""

    GROUNDED = "GROUNDED"
    INFERRED_REASONABLE = "INFERRED_REASONABLE"
    INFERRED_STEREOTYPE = "INFERRED_STEREOTYPE"
    FABRICATED = "FABRICATED"

    @property
    def is_over_inference(self) -> bool:
        return self in (Label.INFERRED_STEREOTYPE, Label.FABRICATED)

    @property
    def provenance(self) -> Provenance:
        return LABEL_TO_PROVENANCE[self]


class Provenance(StrEnum):
    STATED = "stated"
    INFERRED = "inferred"
    GENERATED = "generated"


LABEL_TO_PROVENANCE: dict[Label, Provenance] = {
    Label.GROUNDED: Provenance.STATED,
    Label.INFERRED_REASONABLE: Provenance.INFERRED,
    Label.INFERRED_STEREOTYPE: Provenance.GENERATED,
    Label.FABRICATED: Provenance.GENERATED,
}


class Action(StrEnum):
    STORE = "store"
    STORE_AS_HYPOTHESIS = "store_as_hypothesis"
    QUARANTINE = "quarantine"
    BLOCK = "block"


class MemoryStatus(StrEnum):
    """What a stored item is, as written into the memory's metadata."""

    FACT = "fact"
    HYPOTHESIS = "hypothesis"
    QUARANTINED = "quarantined"


ACTION_TO_STATUS: dict[Action, MemoryStatus | None] = {
    Action.STORE: MemoryStatus.FACT,
    Action.STORE_AS_HYPOTHESIS: MemoryStatus.HYPOTHESIS,
    Action.QUARANTINE: MemoryStatus.QUARANTINED,
    Action.BLOCK: None,
}


def new_turn_id() -> str:
    return f"turn-{uuid.uuid4().hex[:12]}"


class Turn(BaseModel):
    """One message of a conversation, with a stable id."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: NonEmpty = Field(default_factory=new_turn_id)
    role: Role
    content: Annotated[str, AfterValidator(_well_formed)]


class Candidate(BaseModel):
    """An attribute about the user that someone wants to write to memory."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: NonEmpty = Field(default_factory=lambda: f"cand-{uuid.uuid4().hex[:12]}")
    text: FactText
    # Optional hints from an extractor; never trusted as evidence by themselves.
    claimed_source_turn_id: str | None = None
    claimed_label: Label | None = None


class EvidenceLink(BaseModel):
    """Best supporting user turn for a candidate and the features the scorer uses."""

    model_config = ConfigDict(frozen=True)

    turn_id: str | None
    similarity: float
    span: str | None = None
    features: dict[str, float] = Field(default_factory=dict)
    # content words of the claim that no linked user turn supports (claim-support signal)
    unsupported_words: list[str] = Field(default_factory=list)
    # a later user turn about the same thing that denies or ends what the claim asserts ("I quit
    # the bakery" after "I work early shifts at a bakery"), and the claim's words it retracts
    retracted_by: str | None = None
    retracted_words: list[str] = Field(default_factory=list)
    # what a compound claim asserts after its first predicate that is near no user sentence by
    # meaning ("is a vegan" in "Lives in Lisbon and is a vegan" after "I live in Lisbon."), each
    # read with the claim's subject: the decision reads whether the user said any of its words
    unrelated_parts: list[str] = Field(default_factory=list)
    # the claim's names that no user turn says, questions and remarks to the other party
    # included (a name the user only asks about is still the user's word, not the writer's)
    unsaid_names: list[str] = Field(default_factory=list)
    # content words of the claim the token aligner found only in a user word that another of
    # the claim's words says as it is ("dog" aligned to the "cat" of "my cat" in "Has a cat and
    # a dog"), said by no user turn: a second list item read off the first
    doubled_words: list[str] = Field(default_factory=list)
    # content words of the claim the user says only in questions or remarks to the other party
    # ("Is it true Leeds has no tram?"), never of themselves, and the token aligner did not find
    # in the linked turn: the claim's word is taken from what the user asked ("Plans to get
    # around Leeds by tram")
    asked_words: list[str] = Field(default_factory=list)
    # the claim's words the user says only while imagining or wishing ("if I ever won the lottery
    # I'd buy ..."), in a claim that states them as a fact or a plan
    wished_words: list[str] = Field(default_factory=list)
    # the claim's words the user says only as someone else's opinion of them, not agreed with
    # ("my wife says I'm a terrible cook")
    reported_words: list[str] = Field(default_factory=list)
    # the places a claim says the user lives in that the user names only as something else's
    # ("I'm a pharmacist at Boots in Cardiff"): never with a word of living there
    home_unsaid: list[str] = Field(default_factory=list)


class QuoteCheck(StrEnum):
    """What the guard found when it looked for a self-audit's quote in the conversation."""

    VALID = "valid"  # verbatim (after normalisation) in a user turn
    MISSING = "missing"  # no quote, or too short to say anything
    INVENTED = "invented"  # in no turn at all
    ASSISTANT = "assistant"  # only in a non-user turn (assistant, system, tool)


# labels that claim the user said something, so they must quote it
QUOTE_REQUIRED: frozenset[Label] = frozenset({Label.GROUNDED, Label.INFERRED_REASONABLE})


class AuditVerdict(BaseModel):
    """The writer model's own label for one candidate, with the user span it relies on.

    ``quote_check`` is set by the guard (never by the model): ``None`` means not checked (a
    verdict from before quotes existed). ``source_turn_id`` is the user turn the quote was
    found in, if any.
    """

    model_config = ConfigDict(frozen=True)

    candidate_id: str
    label: Label
    confidence: float = Field(ge=0.0, le=1.0)
    source_turn_id: str | None = None
    quote: str | None = None
    quote_check: QuoteCheck | None = None

    @property
    def quote_bad(self) -> bool:
        """The quote is invented, from a non-user turn, or missing where the label needs one."""
        if self.quote_check in (QuoteCheck.INVENTED, QuoteCheck.ASSISTANT):
            return True
        return self.quote_check is QuoteCheck.MISSING and self.label in QUOTE_REQUIRED


class AuditSource(BaseModel):
    """Whose labels a decision's ``audit`` verdict is: the model and prompt that gave it, and
    the profile mode that calibrates such labels (``self_audit_separate``: the guard's own audit
    call, by the writer or an independent auditor; ``self_audit_inline``: the writer's labels
    from its extraction call). Set by the guard, only when it knows which model and prompt
    labelled; the decision log keeps it with the verdict, so labelled traffic can fit the
    profile of exactly that model, prompt and mode (``mirage report label-sample
    --verdicts-out``, then ``mirage calibrate fit``)."""

    model_config = ConfigDict(frozen=True)

    model: NonEmpty
    prompt_version: NonEmpty
    mode: Literal["self_audit_separate", "self_audit_inline"]


class Decision(BaseModel):
    """What the guard decided about one candidate, and why."""

    model_config = ConfigDict(frozen=True)

    candidate: Candidate
    provenance: Provenance
    action: Action
    source_turn_id: str | None
    similarity: float
    evidence_span: str | None
    score: float | None = Field(description="calibrated P(over-inference); None if undecidable")
    threshold: float | None
    profile_id: str | None
    calibrated: bool
    audit: AuditVerdict | None = None
    audit_source: AuditSource | None = Field(
        default=None, description="the model, prompt and mode whose label ``audit`` is"
    )
    reasons: list[Reason] = Field(
        default_factory=list, description="why: reason codes with parameters (and their text)"
    )

    _reasons = field_validator("reasons", mode="before")(as_reasons)

    @model_validator(mode="after")
    def _linked_when_not_generated(self) -> Decision:
        if self.provenance is not Provenance.GENERATED and not self.source_turn_id:
            raise ValueError(f"{self.provenance} decisions must carry a source_turn_id")
        if self.provenance is Provenance.STATED and self.action is not Action.STORE:
            # stated facts are stored; anything else would be a policy bug
            raise ValueError("a stated decision must have action=store")
        if self.action is Action.STORE and self.provenance is not Provenance.STATED:
            raise ValueError("only stated candidates may be stored as facts")
        return self

    @property
    def status(self) -> MemoryStatus | None:
        return ACTION_TO_STATUS[self.action]

    def summary(
        self, memory_id: str | None = None, *, already_stored: bool = False
    ) -> DecisionSummary:
        """This decision flattened for answers and logs (the one Decision -> row mapping)."""
        return DecisionSummary(
            candidate_id=self.candidate.id,
            text=self.candidate.text,
            provenance=self.provenance,
            action=self.action,
            status=self.status,
            source_turn_id=self.source_turn_id,
            similarity=self.similarity,
            score=self.score,
            threshold=self.threshold,
            profile_id=self.profile_id,
            calibrated=self.calibrated,
            reasons=self.reasons,
            memory_id=memory_id,
            already_stored=already_stored,
        )

    def memory_metadata(self) -> dict[str, str | float | None]:
        """Per-fact metadata written next to the memory text."""
        return {
            "provenance": self.provenance.value,
            "source_turn_id": self.source_turn_id,
            "guard_score": None if self.score is None else round(self.score, 4),
            "profile_id": self.profile_id,
            "status": self.status.value if self.status else None,
        }


class DecisionSummary(BaseModel):
    """A decision as one flat row: what add() answers, the sidecar returns and the log keeps.

    ``reasons`` serialize with their rendered ``text`` next to ``code`` and ``params``.
    """

    model_config = ConfigDict(frozen=True)

    candidate_id: str
    text: str
    provenance: Provenance
    action: Action
    status: MemoryStatus | None
    source_turn_id: str | None
    similarity: float
    score: float | None
    threshold: float | None
    profile_id: str | None
    calibrated: bool
    reasons: list[Reason]
    memory_id: str | None = None
    # the same fact, with the same status, was in the scope already (as ``memory_id``): nothing
    # was written for this decision (Mem0 skips such a repeat too)
    already_stored: bool = False

    _reasons = field_validator("reasons", mode="before")(as_reasons)
