"""What a run writes: one append-only JSONL file per record kind, one line per finished unit."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from mirage_guard.benchmark._schemas import Accuracy, MemoryItem, ProbeItem, SelfAuditClaim
from mirage_guard.benchmark._tasks import Task
from mirage_guard.benchmark.personas import PersonaGroup
from mirage_guard.guard import Action, Label, Provenance
from mirage_guard.guard.llm import Completion


class RetentionPolicy(StrEnum):
    """The Accum memory-update prompt: retain-biased (as in the paper) or free pruning."""

    RETAIN = "retain"
    FREE = "free"


class JudgeTarget(StrEnum):
    TASK = "task"
    PROBE = "probe"
    MEMORY = "memory"


class CallInfo(BaseModel):
    """Token and cost accounting of one LLM call (``cached`` calls cost nothing this run)."""

    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    cached: bool = False
    # "guard_audit": the guard arm's labeller (the guard's own client, not the run's provider)
    role: str | None = None

    @classmethod
    def of(cls, completion: Completion, role: str | None = None) -> CallInfo:
        return cls(
            model=completion.model,
            prompt_tokens=completion.usage.prompt_tokens,
            completion_tokens=completion.usage.completion_tokens,
            cost_usd=completion.cost_usd,
            cached=completion.cached,
            role=role,
        )


GUARD_AUDIT = "guard_audit"


class Accounting(BaseModel):
    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown_calls: int = 0

    def add_calls(
        self, calls: Sequence[CallInfo], model: str | None = None, role: str | None = "any"
    ) -> None:
        """Count calls (of one model only, if given; of one ``role`` only, if not "any": None
        is the run's own calls, :data:`GUARD_AUDIT` the guard arm's audit calls); cache hits
        cost nothing."""
        for c in calls:
            if model is not None and c.model != model:
                continue
            if role != "any" and c.role != role:
                continue
            self.calls += 1
            if c.cached:
                self.cached_calls += 1
                continue
            self.prompt_tokens += c.prompt_tokens
            self.completion_tokens += c.completion_tokens
            if c.cost_usd is None:
                self.cost_unknown_calls += 1
            else:
                self.cost_usd += c.cost_usd

    def cost_text(self) -> str:
        """The cost as a report shows it: "–" when no fresh call has a known price (a model
        litellm has no price for, a self-hosted server), "at least X" when only some have one,
        so an unknown price never reads as 0.0000."""
        priced = self.calls - self.cached_calls - self.cost_unknown_calls
        if self.cost_unknown_calls and not priced:
            return "–"
        if self.cost_unknown_calls:
            return f"at least {self.cost_usd:.4f}"
        return f"{self.cost_usd:.4f}"

    def cost_summary(self) -> str:
        """:meth:`cost_text` and how many calls have no known price (a run's summary line)."""
        unknown = self.cost_unknown_calls
        return self.cost_text() + f" (+{unknown} calls of unknown price)" * bool(unknown)


class StageError(BaseModel):
    type: str
    message: str
    retryable: bool


class Record(BaseModel):
    """Base of every record: the unit it finishes, the calls it made, and its outcome."""

    model_config = ConfigDict(extra="forbid")

    kind: ClassVar[str] = "record"
    unit: str
    model: str
    persona_id: str
    group: PersonaGroup
    calls: list[CallInfo] = Field(default_factory=list)
    error: StageError | None = None
    attempt: int = Field(default=1, ge=1, description="try number (--retry-failed adds tries)")
    cache_try: int | None = Field(
        default=None,
        ge=1,
        description="the try number in its calls' cache keys: it moves past an answered failure "
        "only (None: a record from before the field, whose calls were keyed by attempt)",
    )
    sample: int = Field(default=1, ge=1, description="which sample of the output (--samples)")

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def final(self) -> bool:
        """True when a resumed run must not redo this unit."""
        return self.error is None or not self.error.retryable


class ProbeRecord(Record):
    kind: ClassVar[str] = "probe"
    items: list[ProbeItem] = Field(default_factory=list)


class TaskRecord(Record):
    kind: ClassVar[str] = "task"
    task: Task
    output: str = ""

    @property
    def output_words(self) -> int:
        return len(self.output.split())


class SelfAuditRecord(Record):
    kind: ClassVar[str] = "self_audit"
    task: Task
    claims: list[SelfAuditClaim] = Field(default_factory=list)


class JudgeClaimRecord(BaseModel):
    claim_id: str
    text: str
    label: Label
    source_turn_id: str | None = None
    accuracy: Accuracy = Accuracy.UNVERIFIABLE
    rationale: str = ""


class JudgeRecord(Record):
    """The judge's claims about one output; ``model`` is the subject, ``judge`` the judge."""

    kind: ClassVar[str] = "judge"
    judge: str
    target: JudgeTarget
    task: Task | None = None
    policy: RetentionPolicy | None = None
    guarded: bool | None = None
    memory_scope: Literal["facts", "facts+hypotheses"] | None = Field(
        default=None, description="memory target: which stored entries were judged"
    )
    evidence_turn_ids: list[str] = Field(default_factory=list)
    claims: list[JudgeClaimRecord] = Field(default_factory=list)


class StoredMemoryItem(BaseModel):
    """A memory entry as kept after a round (guarded: with the guard's decision)."""

    text: str
    basis: Literal["stated", "inferred"] = "inferred"
    status: Literal["fact", "hypothesis"] = "fact"
    provenance: Provenance | None = None
    source_turn_id: str | None = None


class AccumRoundRecord(Record):
    kind: ClassVar[str] = "accum"
    policy: RetentionPolicy
    guarded: bool
    round: int
    user_turn_id: str
    user_message: str
    reply: str = ""
    proposed: list[MemoryItem] = Field(default_factory=list)
    memory: list[StoredMemoryItem] = Field(default_factory=list)
    dropped_by_guard: list[str] = Field(default_factory=list)
    contradicted: str | None = None
    revealed: list[str] = Field(default_factory=list)


class GuardClaimDecision(BaseModel):
    claim_id: str
    judge_label: Label
    provenance: Provenance
    action: Action
    source_turn_id: str | None
    score: float | None


class GuardTagRecord(Record):
    """The guard's decisions on the judge-extracted claims of one Task output."""

    kind: ClassVar[str] = "guard"
    task: Task
    decisions: list[GuardClaimDecision] = Field(default_factory=list)


RECORD_TYPES: tuple[type[Record], ...] = (
    ProbeRecord,
    TaskRecord,
    SelfAuditRecord,
    JudgeRecord,
    AccumRoundRecord,
    GuardTagRecord,
)
