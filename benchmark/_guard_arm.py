"""The with-guard arm: the guard tags Task claims and sits in the Accum memory path."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from importlib import resources
from typing import Any, Protocol

from pydantic import BaseModel, Field

from mirage_guard.benchmark._cache import DiskCache, cache_key
from mirage_guard.benchmark._records import (
    GUARD_AUDIT,
    CallInfo,
    GuardClaimDecision,
    JudgeClaimRecord,
    StoredMemoryItem,
)
from mirage_guard.benchmark._schemas import MemoryItem
from mirage_guard.benchmark._stages import Evidence, normalise
from mirage_guard.guard import (
    Action,
    Candidate,
    Decision,
    Guard,
    ReasonCode,
    Role,
    Turn,
    has_text,
)
from mirage_guard.guard.errors import LLMAuthError, LLMError, MirageError
from mirage_guard.guard.llm import Completion, LLMClient, Message, SamplingParams


class ClaimTagger(Protocol):
    """What the benchmark needs of ``mirage_guard.guard.Guard``."""

    async def atag(
        self,
        turns: Sequence[Turn],
        candidates: Sequence[Candidate],
        *,
        writer_model: str | None = None,
    ) -> list[Decision]: ...

    def close(self) -> None: ...


GuardFactory = Callable[[], ClaimTagger]


# the guard arm's audit calls of the unit running now (set by :func:`guard_calls`)
_AUDIT_CALLS: ContextVar[list[CallInfo] | None] = ContextVar("guard_audit_calls", default=None)


@contextmanager
def guard_calls() -> Iterator[list[CallInfo]]:
    """The guard's audit calls made (or found cached) inside the block, for the unit's record:
    they are then in the run's call counts and cost like every other call, under the model that
    labelled. Each unit runs in its own task, so units running together never mix their calls."""
    calls: list[CallInfo] = []
    token = _AUDIT_CALLS.set(calls)
    try:
        yield calls
    finally:
        _AUDIT_CALLS.reset(token)


@contextmanager
def kept_on_failure(*calls: Sequence[CallInfo]) -> Iterator[None]:
    """A unit that fails inside the block keeps the calls answered before it failed (a paid
    audit whose answer could not be read, then the unit's failure): they go on the error, which
    the runner puts on the failed unit's record."""
    try:
        yield
    except MirageError as exc:
        setattr(exc, "calls", [*getattr(exc, "calls", []), *(c for cs in calls for c in cs)])  # noqa: B010
        raise


def _count(calls: Sequence[CallInfo]) -> None:
    found = _AUDIT_CALLS.get()
    if found is not None:
        found.extend(calls)


class MeteredLLM(LLMClient):
    """The guard arm's labeller (the writer auditing itself or an independent auditor): each
    answered call's tokens and cost go to the unit that made it (:func:`guard_calls`)."""

    def __init__(self, inner: LLMClient) -> None:
        self.inner = inner
        self.model = inner.model

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: SamplingParams | None = None,
    ) -> Completion:
        done = await self.inner.complete(messages, schema=schema, params=params)
        _count([CallInfo.of(done, role=GUARD_AUDIT)])
        return done

    async def aclose(self) -> None:
        await self.inner.aclose()


def default_guard_factory() -> ClaimTagger:
    """``mirage_guard.guard.Guard`` from the environment's settings, its audit calls metered."""
    guard = Guard.from_settings()
    if guard.auditor is not None:
        guard.auditor.llm = MeteredLLM(guard.auditor.llm)
    tagger: ClaimTagger = guard
    return tagger


PACKAGED_CLAIMS = "claims.jsonl"
"""The labelled claims the shipped profiles are fitted on (``benchmark/data``); their ``split``
is a function of the persona id, so a profile's training personas are the personas of its split."""


class GuardProfileRef(BaseModel):
    """A calibration profile the guard arm runs with: its content hash and its training data."""

    role: str = Field(description="evidence_profile or audit_profile")
    profile_id: str
    sha256: str = Field(description="sha256 of the profile's JSON content")
    fitted_on: dict[str, Any]
    training_personas: list[str] = Field(
        default_factory=list, description="personas whose claims the profile was fitted on"
    )
    training_data_known: bool = Field(
        description="False: the fit data is not the packaged claims file, so which personas "
        "the profile saw is unknown and guard figures may be in-sample"
    )
    data_sha256_matches: bool = Field(
        default=False, description="the packaged claims file is the exact file it was fitted on"
    )


def _content_sha256(model: BaseModel) -> str:
    return hashlib.sha256(model.model_dump_json().encode("utf-8")).hexdigest()


def _packaged_claims() -> tuple[str, list[dict[str, Any]]]:
    resource = resources.files("mirage_guard.benchmark").joinpath("data", PACKAGED_CLAIMS)
    raw = resource.read_bytes()
    rows = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
    return hashlib.sha256(raw).hexdigest(), rows


def training_personas(fitted_on: dict[str, Any]) -> tuple[set[str], bool, bool]:
    """(personas of the fit split, whether that data is known, whether its sha256 matches)."""
    path = str(fitted_on.get("path", ""))
    if path.rsplit("/", 1)[-1] != PACKAGED_CLAIMS:
        return set(), False, False
    sha, rows = _packaged_claims()
    split = fitted_on.get("split")
    personas = {str(r["persona_id"]) for r in rows if split in (None, "all", r.get("split"))}
    return personas, True, sha == fitted_on.get("sha256")


def profile_refs(tagger: object) -> list[GuardProfileRef]:
    """The profiles a tagger (``mirage_guard.guard.Guard``) scores with; [] for other taggers."""
    refs = []
    for role in ("evidence_profile", "audit_profile"):
        profile = getattr(tagger, role, None)
        if not isinstance(profile, BaseModel):
            continue
        fitted_on = profile.model_dump(mode="json").get("fitted_on") or {}
        personas, known, matches = training_personas(fitted_on)
        refs.append(
            GuardProfileRef(
                role=role,
                profile_id=str(getattr(profile, "profile_id", "")),
                sha256=_content_sha256(profile),
                fitted_on=fitted_on,
                training_personas=sorted(personas),
                training_data_known=known,
                data_sha256_matches=matches,
            )
        )
    return refs


class GuardAuditFailedError(LLMError):
    """The guard arm's self-audit call failed (the auditor's or the writer's): the decisions
    are the guard failing closed, not the guard measured, so the unit fails (a resume retries
    it) and nothing is cached. A run whose audits all failed had exited 0 with guard figures
    that measured nothing."""

    retryable = True


def _audit_failures(decisions: Sequence[Decision]) -> set[str]:
    """The error types of the self-audit failures these decisions name."""
    return {
        str(r.params.get("error", "?"))
        for d in decisions
        for r in d.reasons
        if r.code is ReasonCode.SELF_AUDIT_FAILED
    }


class CachedTagger:
    """Caches a tagger's decisions in the call cache, keyed on the tagger's configuration
    (``describe()``: profile ids, policy, audit mode), the content hashes of its profiles (a
    refitted profile under the same id is another tagger), the turns, the candidates and the
    writer."""

    def __init__(self, inner: ClaimTagger, cache: DiskCache) -> None:
        self.inner = inner
        self.cache = cache
        describe = getattr(inner, "describe", None)
        self.configuration: Any = describe() if callable(describe) else type(inner).__name__
        self.profiles = profile_refs(inner)
        if self.profiles:
            self.configuration = {
                "describe": self.configuration,
                "profile_sha256": {p.role: p.sha256 for p in self.profiles},
            }

    async def atag(
        self,
        turns: Sequence[Turn],
        candidates: Sequence[Candidate],
        *,
        writer_model: str | None = None,
    ) -> list[Decision]:
        key = cache_key(
            {
                "tagger": self.configuration,
                "turns": [t.model_dump(mode="json") for t in turns],
                "candidates": [c.model_dump(mode="json") for c in candidates],
                "writer_model": writer_model,
            }
        )
        # the decisions' audit calls under a key of their own: the decisions' entry keeps the
        # shape every version reads
        calls_key = cache_key({"guard_audit_calls_of": key})
        hit = self.cache.get_json(key)
        if hit is not None:
            cached = [Decision.model_validate(d) for d in json.loads(hit)]
            if not _audit_failures(cached):  # an older version cached failed audits: redo them
                made = json.loads(self.cache.get_json(calls_key) or "[]")  # none: an older cache
                _count(
                    [CallInfo.model_validate({**c, "cached": True}) for c in made]
                )  # cache hits: counted as calls, costing nothing this run
                return cached
        calls: list[CallInfo] = []
        try:
            with guard_calls() as calls:
                decisions = await self.inner.atag(turns, candidates, writer_model=writer_model)
        finally:  # answered calls count even when the unit then fails
            _count(calls)
        self._refuse_failed_audits(decisions, writer_model)
        self.cache.put_json(key, json.dumps([d.model_dump(mode="json") for d in decisions]))
        self.cache.put_json(calls_key, json.dumps([c.model_dump(mode="json") for c in calls]))
        return decisions

    def _refuse_failed_audits(
        self, decisions: Sequence[Decision], writer_model: str | None
    ) -> None:
        failed = _audit_failures(decisions)
        if not failed:
            return
        model = getattr(self.inner, "labeller_model", None) or writer_model
        message = (
            f"the guard arm's self-audit failed ({', '.join(sorted(failed))}) for "
            f"{len(decisions)} claim(s): its decisions would measure the guard failing closed"
        )
        if "LLMAuthError" in failed:  # as every refused key does: the run stops, one line
            raise LLMAuthError(message, model=model)
        raise GuardAuditFailedError(message, model=model)

    def close(self) -> None:
        self.inner.close()


def evidence_turns(evidence: Sequence[Evidence]) -> list[Turn]:
    return [Turn(id=e.turn_id, role=Role.USER, content=e.text) for e in evidence]


async def tag_task_claims(
    tagger: ClaimTagger,
    evidence: Sequence[Evidence],
    claims: Sequence[JudgeClaimRecord],
    *,
    writer_model: str,
) -> list[GuardClaimDecision]:
    if not claims:
        return []
    candidates = [Candidate(id=c.claim_id, text=c.text) for c in claims]
    decisions = await tagger.atag(evidence_turns(evidence), candidates, writer_model=writer_model)
    return [
        GuardClaimDecision(
            claim_id=claim.claim_id,
            judge_label=claim.label,
            provenance=d.provenance,
            action=d.action,
            source_turn_id=d.source_turn_id,
            score=d.score,
        )
        for claim, d in zip(claims, decisions, strict=True)
    ]


async def guard_memory_update(
    tagger: ClaimTagger | None,
    evidence: Sequence[Evidence],
    previous: Sequence[StoredMemoryItem],
    proposed: Sequence[MemoryItem],
    *,
    writer_model: str,
    round_no: int,
) -> tuple[list[StoredMemoryItem], list[str]]:
    """The memory kept after a round, and the texts the guard kept out.

    Without a guard every proposed entry is kept as a fact. With one, entries already kept keep
    their status; new entries pass through the guard: ``store`` -> fact, ``store_as_hypothesis``
    -> hypothesis, ``quarantine``/``block`` -> not carried. Entries the model dropped are gone.
    """
    if tagger is None:
        return [StoredMemoryItem(text=p.text, basis=p.basis) for p in proposed], []
    kept_before = {normalise(m.text): m for m in previous}
    carried: dict[int, StoredMemoryItem] = {}
    new: list[tuple[int, MemoryItem]] = []
    dropped: list[str] = []
    for i, item in enumerate(proposed):
        if not has_text(item.text):  # says nothing: no entry to keep or to tag
            dropped.append(item.text)
            continue
        before = kept_before.get(normalise(item.text))
        if before is not None:
            carried[i] = before
        else:
            new.append((i, item))
    if new:
        candidates = [Candidate(id=f"r{round_no}-m{i:02d}", text=item.text) for i, item in new]
        decisions = await tagger.atag(
            evidence_turns(evidence), candidates, writer_model=writer_model
        )
        for (i, item), decision in zip(new, decisions, strict=True):
            if decision.action in (Action.QUARANTINE, Action.BLOCK):
                dropped.append(item.text)
                continue
            carried[i] = StoredMemoryItem(
                text=item.text,
                basis=item.basis,
                status="fact" if decision.action is Action.STORE else "hypothesis",
                provenance=decision.provenance,
                source_turn_id=decision.source_turn_id,
            )
    return [carried[i] for i in sorted(carried)], dropped
