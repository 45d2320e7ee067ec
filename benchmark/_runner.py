"""Runs a benchmark: schedules every unit with anyio, resumes, records, accounts.

Client stack per model (outermost first)::

    CapabilityAwareLLM -> CachedLLM -> LimitedLLM(name) -> RetryingLLM -> provider

so params a provider rejects are dropped before the cache key is taken (and recorded in the
manifest), cache hits take no concurrency slot and are never retried, and each retry waits inside
the model's limit. The provider is a LiteLLMClient or an offline fake.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import anyio
from anyio.abc import TaskGroup

from mirage_guard.benchmark._cache import CachedLLM, DiskCache, attempt_scope, sample_scope
from mirage_guard.benchmark._capabilities import CapabilityAwareLLM, ParamsSent
from mirage_guard.benchmark._config import RunConfig, RuntimeOptions, Stage
from mirage_guard.benchmark._guard_arm import (
    CachedTagger,
    ClaimTagger,
    GuardFactory,
    default_guard_factory,
    guard_calls,
    guard_memory_update,
    kept_on_failure,
    tag_task_claims,
)
from mirage_guard.benchmark._limits import ConcurrencyLimits, LimitedLLM
from mirage_guard.benchmark._offline import is_offline
from mirage_guard.benchmark._progress import NullProgress, ProgressSink
from mirage_guard.benchmark._records import (
    Accounting,
    AccumRoundRecord,
    CallInfo,
    GuardTagRecord,
    JudgeRecord,
    JudgeTarget,
    ProbeRecord,
    Record,
    RetentionPolicy,
    SelfAuditRecord,
    StageError,
    StoredMemoryItem,
    TaskRecord,
)
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._schemas import ClaimUnits
from mirage_guard.benchmark._stages import (
    MEMORY_REQUEST,
    PROBE_REQUEST,
    AccumRound,
    Evidence,
    plan_round,
    run_judge,
    run_memory_update,
    run_probe,
    run_self_audit,
    run_task,
)
from mirage_guard.benchmark._tasks import Task
from mirage_guard.benchmark.personas import (
    Persona,
    load_personas,
    personas_file_sha256,
    personas_sha256,
    select_personas,
)
from mirage_guard.guard.errors import ConfigError, LLMAuthError, MirageError
from mirage_guard.guard.llm import LLMClient, RetryingLLM, SamplingParams, create_llm

R = TypeVar("R", bound=Record)
E = TypeVar("E", bound=BaseException)
ProviderFactory = Callable[[str], LLMClient]


def litellm_provider(options: RuntimeOptions) -> ProviderFactory:
    def factory(model: str) -> LLMClient:
        return create_llm(model, api_base=options.api_base_for(model), timeout_s=options.timeout_s)

    return factory


def _unit_fields(key: str, model: str, persona: Persona) -> dict[str, object]:
    """Fields every record of one unit of work carries."""
    return {
        "unit": key,
        "model": model,
        "persona_id": persona.persona_id,
        "group": persona.group,
    }


@dataclass
class RunSummary:
    run_dir: Path
    units_done: int = 0
    units_resumed: int = 0
    errors: int = 0
    accounting: Accounting = field(default_factory=Accounting)
    error_messages: list[str] = field(default_factory=list)

    def add_calls(self, calls: Sequence[CallInfo]) -> None:
        self.accounting.add_calls(calls)


def unit_count(config: RunConfig, personas: int, *, guard_excluded: int = 0) -> dict[Stage, int]:
    """How many records each stage writes (the progress bars' totals); ``guard_excluded``
    personas get no guard records and are not Accum personas when a guard arm runs."""
    n_models, n_tasks = len(config.models), len(config.tasks)
    stages = set(config.stages)
    arms = config.guard.arms
    guarded_personas = personas - guard_excluded if True in arms else personas
    counts: dict[Stage, int] = {}
    if Stage.PROBE in stages:
        counts[Stage.PROBE] = n_models * personas
    n_tasks *= config.samples  # every sample is its own Task output
    if Stage.TASK in stages:
        counts[Stage.TASK] = n_models * personas * n_tasks
    if Stage.SELF_AUDIT in stages:
        counts[Stage.SELF_AUDIT] = n_models * personas * n_tasks
    accum_units = (
        n_models
        * min(config.accum_personas, guarded_personas)
        * len(config.accum_policies)
        * len(arms)
    )
    if Stage.JUDGE in stages:
        judged = n_models * personas * n_tasks * (Stage.TASK in stages)
        judged += n_models * personas * (Stage.PROBE in stages)
        judged += accum_units * (Stage.ACCUM in stages)
        judged += n_models * guarded_personas * n_tasks * (True in arms) * (Stage.TASK in stages)
        counts[Stage.JUDGE] = judged
    if Stage.ACCUM in stages:
        counts[Stage.ACCUM] = accum_units * config.accum_rounds
    return counts


def client_stack(
    llm: LLMClient,
    model: str,
    *,
    role: str,
    options: RuntimeOptions,
    limits: ConcurrencyLimits,
    cache: DiskCache,
) -> CapabilityAwareLLM:
    """A stage's client: retries inside a named concurrency limit, behind the disk cache."""
    inner = RetryingLLM(
        llm,
        attempts=options.retry_attempts,
        initial_s=options.retry_initial_s,
        rate_limit_floor_s=options.rate_limit_floor_s,
        jitter_s=options.retry_jitter_s,
    )
    name = "judge" if role == "judge" else f"subject:{model}"
    limited = LimitedLLM(inner, limits, name)
    return CapabilityAwareLLM(CachedLLM(limited, cache), offline=is_offline(model))


class BenchmarkRun:
    """One run of MirageBench into a run directory (new or resumed)."""

    def __init__(
        self,
        config: RunConfig,
        run_dir: str | Path,
        *,
        provider: ProviderFactory,
        options: RuntimeOptions | None = None,
        guard_factory: GuardFactory | None = None,
        cache_dir: str | Path | None = None,
        personas: Sequence[Persona] | None = None,
        progress: ProgressSink | None = None,
        offline_models: Sequence[str] = (),
    ) -> None:
        self.config = config
        self.options = options or RuntimeOptions()
        self.run_dir = RunDirectory(run_dir)
        self.cache = DiskCache(cache_dir or self.run_dir.cache_dir)
        self.provider = provider
        self.guard_factory = guard_factory
        everyone = [*config.models, config.judge]
        # a mock/ model is offline whoever built the provider; callers may name more
        self.offline_models = [m for m in everyone if is_offline(m) or m in offline_models]
        self.progress: ProgressSink = progress or NullProgress()
        all_personas = (
            list(personas) if personas is not None else load_personas(config.personas_file)
        )
        self.personas = select_personas(all_personas, config.personas, limit=config.limit)
        self._facts: dict[str, object] = {
            "personas_sha256": personas_sha256(all_personas),
            "personas_file_sha256": None
            if personas is not None
            else personas_file_sha256(config.personas_file),
        }
        self._guard_excluded: frozenset[str] = frozenset()
        self.limits = ConcurrencyLimits(
            {"judge": self.options.judge_concurrency}, default=self.options.concurrency
        )
        self.clients: dict[str, CapabilityAwareLLM] = {}
        self.summary = RunSummary(run_dir=self.run_dir.path)
        self._done: dict[str, Record] = {}
        self._failed_before: dict[str, int] = {}
        self._answered_before: dict[str, int] = {}
        self._tagger: ClaimTagger | None = None

    # -- clients ---------------------------------------------------------------------------

    def client(self, model: str, *, role: str) -> CapabilityAwareLLM:
        if model not in self.clients:
            self.clients[model] = client_stack(
                self.provider(model), model, role=role, options=self.options,
                limits=self.limits, cache=self.cache,
            )  # fmt: skip
        return self.clients[model]

    def params_sent(self) -> dict[str, dict[str, ParamsSent]]:
        """Per model and role, what each provider is sent (litellm's capability lookup)."""
        roles: dict[str, dict[str, SamplingParams]] = {
            model: {
                "generation": self.generation_params(),
                "self_audit": self.self_audit_params(),
            }
            for model in self.config.models
        }
        if self.config.task_stop:
            for by_role in roles.values():
                by_role["task"] = self.task_params()
        roles[self.config.judge] = {"judge": self.judge_params()}
        return {
            model: {
                role: self.client(model, role=role).resolve(params)
                for role, params in by_role.items()
            }
            for model, by_role in roles.items()
        }

    def generation_params(self) -> SamplingParams:
        return SamplingParams(
            temperature=self.config.task_temperature,
            max_tokens=self.config.max_tokens,
            seed=self.config.seed,
        )

    def task_params(self) -> SamplingParams:
        """Task answers: free text, so the run's stop sequences apply (never to JSON stages)."""
        return self.generation_params().model_copy(
            update={"stop": tuple(self.config.task_stop) or None}
        )

    def self_audit_params(self) -> SamplingParams:
        return SamplingParams(
            temperature=self.config.self_audit_temperature,
            max_tokens=self.config.max_tokens,
            seed=self.config.seed,
        )

    def judge_params(self) -> SamplingParams:
        return SamplingParams(
            temperature=self.config.judge_temperature,
            max_tokens=self.config.max_tokens,
            seed=self.config.seed,
        )

    # -- units -----------------------------------------------------------------------------

    async def unit(
        self,
        stage: Stage,
        record_type: type[R],
        key: str,
        work: Callable[[], Awaitable[R]],
        *,
        fallback: Callable[[StageError], R],
    ) -> R:
        """Return the unit's record: from a previous run if final, else by doing ``work``."""
        previous = self._done.get(key)
        if isinstance(previous, record_type):
            self.summary.units_resumed += 1
            self.progress.advance(stage)
            return previous
        attempt = self._failed_before.get(key, 0) + 1
        cache_try = self._answered_before.get(key, 0) + 1
        try:
            # the cache key changes only past an answered failure (--retry-failed): a unit redone
            # after a timeout keeps its first key, which another run on the same cache asks for
            with attempt_scope(cache_try):
                record = await work()
        except LLMAuthError:
            raise
        except MirageError as exc:
            record = fallback(
                StageError(type=type(exc).__name__, message=str(exc)[:500], retryable=exc.retryable)
            )
            record.calls = list(getattr(exc, "calls", []))
            self.summary.errors += 1
            self.summary.error_messages.append(f"{key}: {record.error and record.error.message}")
        record.attempt = attempt
        record.cache_try = cache_try
        self.run_dir.append(record)
        self._done[key] = record
        self.summary.units_done += 1
        self.summary.add_calls(record.calls)
        self.progress.advance(stage)
        return record

    async def probe(self, model: str, persona: Persona) -> ProbeRecord:
        key = f"probe|{model}|{persona.persona_id}"
        base = _unit_fields(key, model, persona)

        async def work() -> ProbeRecord:
            out, info = await run_probe(
                self.client(model, role="subject"), persona, self.generation_params()
            )
            return ProbeRecord(**base, items=out.items, calls=[info])

        record = await self.unit(
            Stage.PROBE, ProbeRecord, key, work, fallback=lambda e: ProbeRecord(**base, error=e)
        )
        if Stage.JUDGE in self.config.stages and record.ok:
            # the claims only: the judge labels them blind to the model's own labels
            output = "\n".join(f"- {i.claim}" for i in record.items)
            await self.judge(
                model,
                persona,
                JudgeTarget.PROBE,
                f"{model}/{persona.persona_id}/probe",
                evidence=_facts(persona),
                request=PROBE_REQUEST,
                output=output,
            )
        return record

    async def judge(
        self,
        model: str,
        persona: Persona,
        target: JudgeTarget,
        prefix: str,
        *,
        evidence: list[Evidence],
        request: str,
        output: str,
        task: Task | None = None,
        policy: RetentionPolicy | None = None,
        guarded: bool | None = None,
        memory_scope: str | None = None,
        sample: int = 1,
    ) -> JudgeRecord:
        key = f"judge|{prefix}"
        base = {
            **_unit_fields(key, model, persona),
            "judge": self.config.judge,
            "target": target,
            "task": task,
            "policy": policy,
            "guarded": guarded,
            "memory_scope": memory_scope,
            "sample": sample,
            "evidence_turn_ids": [e.turn_id for e in evidence],
        }

        async def work() -> JudgeRecord:
            claims, info = await run_judge(
                self.client(self.config.judge, role="judge"),
                persona,
                evidence=evidence,
                request=request,
                output=output,
                claim_prefix=prefix,
                params=self.judge_params(),
                units=self.config.claim_units if target is JudgeTarget.TASK else ClaimUnits.FREE,
            )
            return JudgeRecord(**base, claims=claims, calls=[info])

        return await self.unit(
            Stage.JUDGE, JudgeRecord, key, work, fallback=lambda e: JudgeRecord(**base, error=e)
        )

    async def task_chain(self, model: str, persona: Persona, task: Task, sample: int = 1) -> None:
        """Task -> (Self-audit, Judge -> guard tagging), for the ``sample``-th output."""
        stages = self.config.stages
        if Stage.TASK not in stages:
            return
        key = f"task|{model}|{persona.persona_id}|{task.value}{_sample_suffix(sample)}"
        base = {
            **_unit_fields(key, model, persona),
            "task": task,
            "sample": sample,
        }

        async def work() -> TaskRecord:
            with sample_scope(sample):
                text, info = await run_task(
                    self.client(model, role="subject"), persona, task, self.task_params()
                )
            return TaskRecord(**base, output=text, calls=[info])

        record = await self.unit(
            Stage.TASK, TaskRecord, key, work, fallback=lambda e: TaskRecord(**base, error=e)
        )
        if not record.ok:
            return
        async with anyio.create_task_group() as tg:
            if Stage.SELF_AUDIT in stages:
                tg.start_soon(self.self_audit, model, persona, task, record.output, sample)
            if Stage.JUDGE in stages:
                tg.start_soon(self.judge_and_tag, model, persona, task, record.output, sample)

    async def self_audit(
        self, model: str, persona: Persona, task: Task, output: str, sample: int = 1
    ) -> None:
        key = f"self_audit|{model}|{persona.persona_id}|{task.value}{_sample_suffix(sample)}"
        base = {
            **_unit_fields(key, model, persona),
            "task": task,
            "sample": sample,
        }

        async def work() -> SelfAuditRecord:
            out, info = await run_self_audit(
                self.client(model, role="subject"),
                persona,
                task,
                output,
                self.self_audit_params(),
                units=self.config.claim_units,
            )
            return SelfAuditRecord(**base, claims=out.claims, calls=[info])

        await self.unit(
            Stage.SELF_AUDIT,
            SelfAuditRecord,
            key,
            work,
            fallback=lambda e: SelfAuditRecord(**base, error=e),
        )

    async def judge_and_tag(
        self, model: str, persona: Persona, task: Task, output: str, sample: int = 1
    ) -> None:
        judged = await self.judge(
            model,
            persona,
            JudgeTarget.TASK,
            f"{model}/{persona.persona_id}/{task.value}" + (f"/s{sample}" if sample > 1 else ""),
            evidence=_facts(persona),
            request=task.display_name,
            output=output,
            task=task,
            sample=sample,
        )
        if not judged.ok or True not in self.config.guard.arms:
            return
        if persona.persona_id in self._guard_excluded:
            return  # a guard profile was fitted on this persona: not measured on it
        key = f"guard|{model}|{persona.persona_id}|{task.value}{_sample_suffix(sample)}"
        base = {
            **_unit_fields(key, model, persona),
            "task": task,
            "sample": sample,
        }

        async def work() -> GuardTagRecord:
            with guard_calls() as calls, kept_on_failure(calls):
                decisions = await tag_task_claims(
                    self.tagger(), _facts(persona), judged.claims, writer_model=model
                )
            return GuardTagRecord(**base, decisions=decisions, calls=calls)

        await self.unit(
            Stage.JUDGE,
            GuardTagRecord,
            key,
            work,
            fallback=lambda e: GuardTagRecord(**base, error=e),
        )

    def _guard_setup(self) -> None:
        """Hold the guard arm out of its own training data: personas any guard profile was
        fitted on are not measured with the guard (recorded in the manifest with the profiles'
        content hashes)."""
        tagger = self.tagger()
        refs = tagger.profiles if isinstance(tagger, CachedTagger) else []
        self._guard_excluded = frozenset(p for ref in refs for p in ref.training_personas)
        self._facts["guard_profiles"] = [ref.model_dump(mode="json") for ref in refs]
        configuration = tagger.configuration if isinstance(tagger, CachedTagger) else None
        # as the manifest will read it back (JSON), so a resume compares like with like
        self._facts["guard_configuration"] = json.loads(json.dumps(configuration, default=str))
        self._facts["guard_excluded_personas"] = sorted(
            p.persona_id for p in self.personas if p.persona_id in self._guard_excluded
        )

    def _refuse_an_empty_guard_arm(self) -> None:
        """A guard arm with no held-out persona measures nothing, and takes the Accum stage of
        both arms with it; it ran, exit 0, with empty guard tables (``--limit`` below 9 takes
        training personas only)."""
        if not self.personas or any(
            p.persona_id not in self._guard_excluded for p in self.personas
        ):
            return
        raise ConfigError(
            f"--guard {self.config.guard.value}: every selected persona "
            f"({len(self.personas)}) is one a guard profile was fitted on, so the guard arm "
            "(and Accum, which compares both arms on held-out personas) would measure nothing; "
            "select held-out personas (with the shipped profile, the dev split: --personas "
            "st-003,ct-003,nt-003, or --limit 9 or more), or run with --guard off"
        )

    def accum_personas(self) -> list[Persona]:
        """The Accum personas; with a guard arm, both arms use held-out personas only."""
        pool = [p for p in self.personas if p.persona_id not in self._guard_excluded]
        return pool[: self.config.accum_personas]

    def tagger(self) -> ClaimTagger:
        if self._tagger is None:
            if self.guard_factory is None:
                self.guard_factory = default_guard_factory
            self._tagger = CachedTagger(self.guard_factory(), self.cache)
        return self._tagger

    async def accum(
        self, model: str, persona: Persona, policy: RetentionPolicy, guarded: bool
    ) -> None:
        """8 rounds of memory updates, sequential; then the judge reads the final memory."""
        memory: list[StoredMemoryItem] = []
        evidence: list[Evidence] = []
        arm = "guard" if guarded else "noguard"
        for round_no in range(1, self.config.accum_rounds + 1):
            plan = plan_round(
                persona, round_no, memory, rounds=self.config.accum_rounds, seed=self.config.seed
            )
            evidence.extend(plan.new_evidence)
            key = f"accum|{model}|{persona.persona_id}|{policy.value}|{arm}|r{round_no}"
            record = await self.accum_round(
                key, model, persona, policy, guarded, round_no, plan, memory, list(evidence)
            )
            if not record.ok:
                return
            memory = record.memory
        if Stage.JUDGE not in self.config.stages:
            return
        facts = [m for m in memory if m.status == "fact"]
        # facts only, and (when the guard kept hypotheses) facts + hypotheses: pollution of both
        scopes = [("facts", facts, "")]
        if len(facts) != len(memory):
            scopes.append(("facts+hypotheses", memory, "-all"))
        for scope, entries, suffix in scopes:
            await self.judge(
                model,
                persona,
                JudgeTarget.MEMORY,
                f"{model}/{persona.persona_id}/memory-{policy.value}-{arm}{suffix}",
                evidence=evidence,
                request=MEMORY_REQUEST,
                output="\n".join(f"- {m.text}" for m in entries) or "(no entries)",
                policy=policy,
                guarded=guarded,
                memory_scope=scope,
            )

    async def accum_round(
        self,
        key: str,
        model: str,
        persona: Persona,
        policy: RetentionPolicy,
        guarded: bool,
        round_no: int,
        plan: AccumRound,
        memory: list[StoredMemoryItem],
        evidence: list[Evidence],
    ) -> AccumRoundRecord:
        base = {
            **_unit_fields(key, model, persona),
            "policy": policy,
            "guarded": guarded,
            "round": round_no,
            "user_turn_id": plan.turn_id,
            "user_message": plan.message,
            "contradicted": plan.contradicted,
            "revealed": [e.text for e in plan.new_evidence],
        }

        async def work() -> AccumRoundRecord:
            out, info = await run_memory_update(
                self.client(model, role="subject"),
                policy,
                round_no,
                memory,
                plan.message,
                self.generation_params(),
            )
            with guard_calls() as audits, kept_on_failure([info], audits):
                kept, dropped = await guard_memory_update(
                    self.tagger() if guarded else None,
                    evidence,
                    memory,
                    out.memory,
                    writer_model=model,
                    round_no=round_no,
                )
            return AccumRoundRecord(
                **base,
                reply=out.reply,
                proposed=out.memory,
                memory=kept,
                dropped_by_guard=dropped,
                calls=[info, *audits],
            )

        return await self.unit(
            Stage.ACCUM,
            AccumRoundRecord,
            key,
            work,
            fallback=lambda e: AccumRoundRecord(**base, error=e),
        )

    # -- the whole run ---------------------------------------------------------------------

    def _start_units(self, tg: TaskGroup, accum_personas: Sequence[Persona]) -> None:
        for model in self.config.models:
            for persona in self.personas:
                if Stage.PROBE in self.config.stages:
                    tg.start_soon(self.probe, model, persona)
                for task in self.config.tasks:
                    for sample in range(1, self.config.samples + 1):
                        tg.start_soon(self.task_chain, model, persona, task, sample)
            if Stage.ACCUM not in self.config.stages:
                continue
            for persona in accum_personas:
                for policy in self.config.accum_policies:
                    for guarded in self.config.guard.arms:
                        tg.start_soon(self.accum, model, persona, policy, guarded)

    async def run(self) -> RunSummary:
        problems = self.config.refusals()
        if problems:
            raise ConfigError("; ".join(problems))
        if True in self.config.guard.arms:
            self._guard_setup()
            self._refuse_an_empty_guard_arm()
        excluded = sum(p.persona_id in self._guard_excluded for p in self.personas)
        expected = unit_count(self.config, len(self.personas), guard_excluded=excluded)
        self._facts["expected_units"] = {stage.value: n for stage, n in expected.items()}
        self.run_dir.open(
            self.config,
            offline_models=self.offline_models,
            params_sent=self.params_sent(),
            facts=self._facts,
        )
        self._done = self.run_dir.final_records(retry_failed=self.options.retry_failed)
        self._failed_before, self._answered_before = self.run_dir.tries()
        self.progress.start(expected)
        accum_personas = self.accum_personas()
        try:
            async with anyio.create_task_group() as tg:
                self._start_units(tg, accum_personas)
            self.run_dir.close()
            self.run_dir.mark_finished()
        except BaseExceptionGroup as group:
            # credentials a provider refused stop the run (every unit would fail alike): the
            # error itself, not the task group's ExceptionGroup no `except MirageError` catches
            refused = first_leaf(group, LLMAuthError)
            if refused is None:
                raise
            raise refused from group
        finally:
            self.run_dir.close()
            self.progress.stop()
            if self._tagger is not None:
                self._tagger.close()
            for client in self.clients.values():
                await client.aclose()
        return self.summary


def first_leaf(group: BaseExceptionGroup[BaseException], kind: type[E]) -> E | None:
    """The first exception of ``kind`` anywhere in ``group`` (nested groups included)."""
    matched = group.subgroup(kind)
    if matched is None:
        return None
    leaf: BaseException = matched
    while isinstance(leaf, BaseExceptionGroup):
        leaf = leaf.exceptions[0]
    assert isinstance(leaf, kind)
    return leaf


def _sample_suffix(sample: int) -> str:
    """Unit-key suffix of a sample: none for the first, so single-sample keys never change."""
    return f"|s{sample}" if sample > 1 else ""


def _facts(persona: Persona) -> list[Evidence]:
    return [Evidence(f.turn_id, f.text) for f in persona.revealed_facts]
