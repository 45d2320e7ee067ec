"""Request and response models of the sidecar. Write routes reject unknown fields."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from mirage_guard.adapters._backend import SCOPE_KEYS
from mirage_guard.adapters._decision_log import LoggedDecision
from mirage_guard.adapters._scope import MemoryScope, refuse_reserved
from mirage_guard.guard import AuditVerdict, Candidate, Decision, DecisionSummary, Turn
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.scoring import DriftReading

Id = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200, pattern=r"^\S+$"),
    AfterValidator(lambda v: refuse_reserved("an id", v)),
]
MetaKey = Annotated[
    str, StringConstraints(min_length=1, max_length=100, pattern=r"^[A-Za-z_][\w.-]*$")
]
MetaValue = (
    Annotated[str, StringConstraints(max_length=2000)]
    | bool
    | Annotated[int, Field(ge=-(2**53), le=2**53)]
    | Annotated[float, Field(allow_inf_nan=False)]
    | None
)
Metadata = Annotated[dict[MetaKey, MetaValue], Field(max_length=50)]
# no length of its own: MIRAGE_MAX_TURN_CHARS / MIRAGE_MAX_CANDIDATE_CHARS bound what the guard
# reads (413 limit_exceeded, the limit named) and MIRAGE_MAX_BODY_BYTES the request (413); a
# fixed cap here answered 422 first and ignored a raised setting
Text = str
Query = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4000)]
LOGICAL_FILTER_KEYS = ("AND", "OR", "NOT")


def _filter_key(key: str) -> None:
    """A metadata key a filter may name: an identifier (a dotted key is a nested path to a
    store), and not the platform's ``app_id``, which no store here scopes by."""
    if not isinstance(key, str) or not key.isidentifier():
        raise ValueError(f"filter key {key!r} is not supported")
    if key == "app_id":  # read as a metadata key, it matched nothing, silently
        raise ValueError("app_id is not a scope here: filter by user_id, agent_id, run_id")


def _one_of(key: str, top: str | None, in_filters: str | None) -> str | None:
    """A scope id given at the top of a body and in its ``filters``: the same, or refused (the
    top one silently won, filing a memory under the other user than ``filters`` named)."""
    if top is not None and in_filters is not None and top != in_filters:
        raise InputError(f"{key} {top!r} and filters.{key} {in_filters!r} differ: give one")
    return top if top is not None else in_filters


class _Write(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MessageIn(_Write):
    role: Literal["user", "assistant", "system", "tool"]
    content: Text | list[dict[str, Any]] | None = Field(
        description="a string, or OpenAI-style parts (text parts joined by line breaks; an "
        "image part is refused: 400); null (e.g. an assistant's tool call): the message is "
        "skipped, as Mem0 does"
    )
    id: Id | None = Field(default=None, description="stable turn id; assigned when absent")
    name: str | None = Field(
        default=None,
        description="accepted and ignored: Mem0 keeps it as the memory's actor_id; the guard "
        "has no actor",
    )
    # an OpenAI-format history sent as it is: an assistant's tool calls and a tool result's
    # call id, ignored as Mem0 ignores them (422 before: "extra inputs are not permitted")
    tool_calls: list[dict[str, Any]] | None = Field(
        default=None, description="accepted and ignored, as Mem0 does"
    )
    tool_call_id: str | None = Field(default=None, description="accepted and ignored")


class ScopeFilters(_Write):
    user_id: Id | None = None
    agent_id: Id | None = None
    run_id: Id | None = None


class AddRequest(_Write):
    """``POST /memories`` (Mem0 OSS)."""

    messages: list[MessageIn] = Field(min_length=1, max_length=200)
    user_id: Id | None = None
    agent_id: Id | None = None
    run_id: Id | None = None
    metadata: Metadata | None = None
    infer: bool = True

    def scope(self) -> MemoryScope:
        return MemoryScope(user_id=self.user_id, agent_id=self.agent_id, run_id=self.run_id)


class V3AddRequest(AddRequest):
    """``POST /v3/memories/add/`` (what ``mem0.MemoryClient.add`` sends)."""

    filters: ScopeFilters | None = None
    infer: bool | None = None  # type: ignore[assignment]

    def scope(self) -> MemoryScope:
        f = self.filters or ScopeFilters()
        return MemoryScope(**{k: _one_of(k, getattr(self, k), getattr(f, k)) for k in SCOPE_KEYS})


class SearchFilters(BaseModel):
    """Scope ids plus Mem0's metadata conditions: equality, operators, ``AND`` / ``OR`` / ``NOT``
    (checked where the drop-in checks them, :mod:`mirage_guard.adapters._filters`: 400)."""

    model_config = ConfigDict(extra="allow")

    user_id: Id | None = None
    agent_id: Id | None = None
    run_id: Id | None = None

    @model_validator(mode="after")
    def _known_keys(self) -> SearchFilters:
        for key, value in (self.model_extra or {}).items():
            if key in LOGICAL_FILTER_KEYS:
                items = value if isinstance(value, list) else []
                keys = [k for item in items if isinstance(item, dict) for k in item]
                for sub_key in keys:
                    if sub_key not in (*SCOPE_KEYS, *LOGICAL_FILTER_KEYS):
                        _filter_key(sub_key)
            else:
                _filter_key(key)
        return self

    def as_filters(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: v for k, v in self.model_dump().items() if v is not None}
        return out


class SearchRequest(_Write):
    """``POST /search`` (Mem0 OSS)."""

    query: Query
    user_id: Id | None = None
    agent_id: Id | None = None
    run_id: Id | None = None
    filters: SearchFilters | None = None
    top_k: int = Field(default=20, ge=1, le=100)
    threshold: float = Field(default=0.1, ge=0.0, le=1.0)
    include_hypotheses: bool = False
    include_quarantined: bool = False

    def merged_filters(self) -> dict[str, Any]:
        f = self.filters.as_filters() if self.filters else {}
        for key in SCOPE_KEYS:
            value = _one_of(key, getattr(self, key), f.get(key))
            if value is not None:
                f[key] = value
        return f


class V3SearchRequest(SearchRequest):
    """``POST /v3/memories/search/``; ``rerank`` is accepted and, as in Mem0 OSS without a
    configured reranker, has no effect."""

    rerank: bool | None = None


class V3ListRequest(_Write):
    """``POST /v3/memories/`` (``MemoryClient.get_all``)."""

    filters: SearchFilters | None = None
    include_hypotheses: bool = False
    include_quarantined: bool = False


class UpdateRequest(_Write):
    """``PUT /memories/{id}`` and ``PUT /v1/memories/{id}/``."""

    text: Annotated[str, StringConstraints(min_length=1)] | None = None
    metadata: Metadata | None = None


class TagRequest(_Write):
    """``POST /v1/guard/tag``: stateless tagging, nothing is written."""

    turns: list[Turn] = Field(min_length=1, max_length=200)
    candidates: list[Candidate] = Field(max_length=100)
    writer_model: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    audit: list[AuditVerdict] | None = Field(default=None, max_length=100)
    user_name: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
        | None
    ) = Field(
        default=None,
        description="the user's own name: a claim that names the user says no new name",
    )


class TagResponse(BaseModel):
    decisions: list[Decision]


class MemoryItem(BaseModel):
    """A memory as the sidecar returns it: Mem0's fields plus the provenance fields."""

    model_config = ConfigDict(extra="allow")

    id: str
    memory: str
    provenance: str | None = None
    source_turn_id: str | None = None
    guard_score: float | None = None
    profile_id: str | None = None
    status: str | None = None


class ItemList(BaseModel):
    results: list[MemoryItem]


class PagedItems(ItemList):
    count: int
    next: str | None = None
    previous: str | None = None


class Entity(BaseModel):
    """A user, agent or run the tenant has memories of (``MemoryClient.users()``)."""

    id: str
    name: str
    type: Literal["user", "agent", "run"]
    total_memories: int
    created_at: str | None = None
    updated_at: str | None = None


class EntityList(BaseModel):
    count: int
    next: str | None = None
    previous: str | None = None
    results: list[Entity]


class TurnRef(BaseModel):
    id: str
    role: str


class AddResponse(BaseModel):
    results: list[MemoryItem]
    decisions: list[DecisionSummary]
    turns: list[TurnRef]
    message: str | None = Field(
        default=None, description="set when nothing was written, saying why (e.g. empty messages)"
    )


class Message(BaseModel):
    message: str


class UpdateResponse(Message):
    """An update's answer; a text edit carries the guard's decision on the new text."""

    decision: DecisionSummary | None = None


class DecisionList(BaseModel):
    results: list[LoggedDecision]


class ProfileSummary(BaseModel):
    profile_id: str
    mode: str
    writer_model: str | None
    prompt_version: str | None
    oi_threshold: float
    stated_threshold: float
    objective: str
    profile_hash: str | None = Field(
        default=None, description="content hash: the version decisions record"
    )
    fitted_score_distribution: bool = Field(
        default=False, description="False: drift against this profile is unknown (refit it)"
    )
    guard_held_out: dict[str, float | list[float]] = Field(
        default_factory=dict,
        description="the guard's own figures with this profile on claims it was not fitted on, "
        "as `calibrate fit` / `from-bench` recorded them (dev_guard_*: the dev split; "
        "heldout_guard_*: cross-validated); empty for a profile fitted before they were",
    )


class ProfilesResponse(BaseModel):
    guard: dict[str, Any]
    profiles: list[ProfileSummary]
    drift: DriftReading | None = Field(
        default=None, description="the writer model's live scores against its active profile"
    )


class ErrorBody(BaseModel):
    type: str
    message: str
    retryable: bool = False


class ErrorResponse(BaseModel):
    detail: str
    error: ErrorBody


class Ping(BaseModel):
    status: Literal["ok"] = "ok"
    org_id: str | None = None
    project_id: str | None = None
    user_email: str | None = None


class Health(BaseModel):
    status: Literal["ok"] = "ok"


class Readiness(BaseModel):
    status: Literal["ready"] = "ready"
    backend: str
