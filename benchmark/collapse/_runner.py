"""Runs the persona-collapse diagnostic on MirageBench's harness.

The same client stack per model as MirageBench (``CapabilityAwareLLM -> CachedLLM ->
LimitedLLM(subject:<model> | judge) -> RetryingLLM -> provider``), its call cache, its run
directory and its accounting. Units: one answer per (model, condition, memory arm, situation)
(Plan-First: the plan call and the answer call), one judge score per answer, one memory per
(MirageBench persona, memory arm).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

import anyio

from mirage_guard.benchmark._cache import DiskCache, attempt_scope, prompt_scope
from mirage_guard.benchmark._capabilities import CapabilityAwareLLM
from mirage_guard.benchmark._config import RuntimeOptions
from mirage_guard.benchmark._guard_arm import (
    CachedTagger,
    ClaimTagger,
    GuardFactory,
    default_guard_factory,
    guard_calls,
    kept_on_failure,
)
from mirage_guard.benchmark._limits import ConcurrencyLimits
from mirage_guard.benchmark._records import CallInfo, StageError
from mirage_guard.benchmark._runner import ProviderFactory, RunSummary, client_stack, first_leaf
from mirage_guard.benchmark._stages import (
    TRUNCATED,
    EmptyOutputError,
    TruncatedOutputError,
    UnparsableOutputError,
    refuse_copied_placeholders,
    strip_reasoning,
    whole_answer,
)
from mirage_guard.benchmark.collapse._config import CollapseConfig, Condition, MemoryArm
from mirage_guard.benchmark.collapse._memory import (
    PackagedClaim,
    assign_personas,
    clean_entries,
    guarded_entries,
    load_claims,
    over_inferred,
    personas_of_split,
    polluted_entries,
    render_memory,
)
from mirage_guard.benchmark.collapse._records import (
    AnswerRecord,
    CollapseRecord,
    MemoryEntry,
    MemoryRecord,
    ScoreRecord,
)
from mirage_guard.benchmark.collapse._rundir import CollapseRunDirectory
from mirage_guard.benchmark.collapse._schemas import StancePlan, StanceScore, parse_strict
from mirage_guard.benchmark.collapse._situations import (
    Situation,
    load_situations,
    select_situations,
)
from mirage_guard.benchmark.personas import Persona, load_personas
from mirage_guard.guard.errors import LLMAuthError, LLMOutputError, MirageError
from mirage_guard.guard.llm import LLMClient, Message, SamplingParams
from mirage_guard.prompts import Prompt, load_prompt

R = TypeVar("R", bound=CollapseRecord)
M = TypeVar("M", StancePlan, StanceScore)


async def call_strict(
    llm: LLMClient,
    messages: list[Message],
    schema: type[M],
    params: SamplingParams,
    prompts: Sequence[Prompt],
) -> tuple[M, CallInfo]:
    """One strict-JSON call; an answer that is cut at ``max_tokens``, does not fit, or copies the
    prompt's placeholder (``"<one or two sentences>"``) raises with the paid call attached."""
    with prompt_scope(*prompts):
        completion = await llm.complete(messages, schema=schema, params=params)
    if completion.finish_reason == TRUNCATED:
        raise TruncatedOutputError(completion)
    info = CallInfo.of(completion)
    try:
        parsed = parse_strict(strip_reasoning(completion.text), schema, model=completion.model)
        refuse_copied_placeholders(parsed, messages, completion)
    except LLMOutputError as exc:
        raise UnparsableOutputError(exc, info) from exc
    return parsed, info


async def call_text(
    llm: LLMClient, messages: list[Message], params: SamplingParams, prompts: Sequence[Prompt]
) -> tuple[str, CallInfo]:
    """One free-text answer; one cut at ``max_tokens`` or empty raises (never used in part),
    as MirageBench's Task stage does."""
    with prompt_scope(*prompts):
        completion = await llm.complete(messages, params=params)
    return whole_answer(completion)


def planned_message(situation: Situation, h: float, e: float, approach: str) -> Message:
    prompt = load_prompt("collapse_answer_planned")
    text = prompt.render(
        situation=situation.situation,
        h=f"{h:.2f}",
        e=f"{e:.2f}",
        approach=f" Approach: {approach.strip()}" if approach.strip() else "",
    )
    return Message(role="user", content=text)


class CollapseRun:
    """One run of the persona-collapse diagnostic into a run directory (new or resumed)."""

    def __init__(
        self,
        config: CollapseConfig,
        run_dir: str | Path,
        *,
        provider: ProviderFactory,
        options: RuntimeOptions | None = None,
        guard_factory: GuardFactory | None = None,
        cache_dir: str | Path | None = None,
        offline_models: Sequence[str] = (),
        situations: Sequence[Situation] | None = None,
        personas: Sequence[Persona] | None = None,
        claims: Sequence[PackagedClaim] | None = None,
    ) -> None:
        self.config = config
        self.options = options or RuntimeOptions()
        self.run_dir = CollapseRunDirectory(run_dir)
        self.cache = DiskCache(cache_dir or self.run_dir.cache_dir)
        self.provider = provider
        self.guard_factory = guard_factory
        self.offline_models = list(offline_models)
        every = (
            list(situations) if situations is not None else load_situations(config.situations_file)
        )
        self.situations = select_situations(every, config.contexts, limit=config.limit)
        self.limits = ConcurrencyLimits(
            {"judge": self.options.judge_concurrency}, default=self.options.concurrency
        )
        self.clients: dict[str, CapabilityAwareLLM] = {}
        self.summary = RunSummary(run_dir=self.run_dir.path)
        self._done: dict[str, CollapseRecord] = {}
        self._failed_before: dict[str, int] = {}
        self._answered_before: dict[str, int] = {}
        self._tagger: ClaimTagger | None = None
        self._memory_lock = anyio.Lock()
        self._memories: dict[tuple[str, MemoryArm], MemoryRecord] = {}
        self.persona_of: dict[str, Persona] = {}
        self.claims: list[PackagedClaim] = []
        if any(m.has_memory for m in config.memory):
            people = list(personas) if personas is not None else load_personas(config.personas_file)
            self.claims = list(claims) if claims is not None else load_claims(config.claims_file)
            people = personas_of_split(people, self.claims, config.memory_split)
            self.persona_of = assign_personas([s.id for s in every], people, seed=config.seed)

    # -- clients (MirageBench's stack) --------------------------------------------------------

    def client(self, model: str, *, role: str) -> CapabilityAwareLLM:
        if model not in self.clients:
            self.clients[model] = client_stack(
                self.provider(model), model, role=role, options=self.options,
                limits=self.limits, cache=self.cache,
            )  # fmt: skip
        return self.clients[model]

    def answer_params(self, arm: MemoryArm = MemoryArm.NONE) -> SamplingParams:
        """Generation params; the ``resample`` arm asks again with the next seed."""
        return SamplingParams(
            temperature=self.config.answer_temperature,
            max_tokens=self.config.max_tokens,
            seed=self.config.seed + (arm is MemoryArm.RESAMPLE),
        )

    def judge_params(self) -> SamplingParams:
        return SamplingParams(
            temperature=self.config.judge_temperature,
            max_tokens=self.config.max_tokens,
            seed=self.config.seed,
        )

    # -- units ------------------------------------------------------------------------------

    async def unit(
        self,
        record_type: type[R],
        key: str,
        work: Callable[[], Awaitable[R]],
        *,
        fallback: Callable[[StageError], R],
    ) -> R:
        """The unit's record: from a previous run if final, else by doing ``work`` (a retried
        unit's calls are asked again, not read back from the cache)."""
        previous = self._done.get(key)
        if isinstance(previous, record_type):
            self.summary.units_resumed += 1
            return previous
        attempt = self._failed_before.get(key, 0) + 1
        cache_try = self._answered_before.get(key, 0) + 1
        try:
            # the cache key moves only past an answered failure (as in bench run)
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
        self.run_dir.write(record)
        self._done[key] = record
        self.summary.units_done += 1
        self.summary.add_calls(record.calls)
        return record

    def tagger(self) -> ClaimTagger:
        if self._tagger is None:
            factory = self.guard_factory or default_guard_factory
            self._tagger = CachedTagger(factory(), self.cache)
        return self._tagger

    async def memory(self, persona: Persona, arm: MemoryArm) -> MemoryRecord:
        """The memory of one persona in one arm (built once, recorded, reused)."""
        async with self._memory_lock:
            cached = self._memories.get((persona.persona_id, arm))
            if cached is not None:
                return cached
            key = f"memory|{persona.persona_id}|{arm.value}"
            base = {"unit": key, "persona_id": persona.persona_id, "memory": arm}
            pollution = over_inferred(persona, self.claims, limit=self.config.memory_claims)

            async def work() -> MemoryRecord:
                entries: list[MemoryEntry]
                if arm in (MemoryArm.CLEAN, MemoryArm.POLLUTED):
                    entries = (
                        clean_entries(persona)
                        if arm is MemoryArm.CLEAN
                        else polluted_entries(persona, pollution)
                    )
                    return MemoryRecord(**base, entries=entries)
                # the guard's audit calls, if it audits, are this unit's calls
                with guard_calls() as calls, kept_on_failure(calls):
                    entries = await guarded_entries(
                        self.tagger(), persona, pollution, writer_model=None
                    )
                return MemoryRecord(**base, entries=entries, calls=calls)

            record = await self.unit(
                MemoryRecord, key, work, fallback=lambda e: MemoryRecord(**base, error=e)
            )
            self._memories[(persona.persona_id, arm)] = record
            return record

    async def messages_for(
        self, situation: Situation, arm: MemoryArm
    ) -> tuple[list[Message], str | None, list[Prompt]] | None:
        """The memory system message (if any); None when the memory could not be built."""
        if not arm.has_memory:
            return [], None, []
        persona = self.persona_of[situation.id]
        record = await self.memory(persona, arm)
        if not record.ok:
            return None
        system = Message(role="system", content=render_memory(record.entries))
        return [system], persona.persona_id, [load_prompt("collapse_memory")]

    async def answer(
        self, model: str, condition: Condition, arm: MemoryArm, situation: Situation
    ) -> None:
        key = f"answer|{model}|{condition.value}|{arm.value}|{situation.id}"
        prefix = await self.messages_for(situation, arm)
        if prefix is None:
            return
        system, persona_id, memory_prompts = prefix
        base = {
            "unit": key,
            "model": model,
            "situation_id": situation.id,
            "context": situation.context,
            "condition": condition,
            "memory": arm,
            "persona_id": persona_id,
        }
        llm = self.client(model, role="subject")

        async def work() -> AnswerRecord:
            calls: list[CallInfo] = []
            plan: tuple[float, float, str] | None = None
            if condition is Condition.PLAN_FIRST:
                prompt = load_prompt("collapse_plan")
                ask = Message(role="user", content=prompt.render(situation=situation.situation))
                planned, info = await call_strict(
                    llm,
                    [*system, ask],
                    StancePlan,
                    self.answer_params(arm),
                    [*memory_prompts, prompt],
                )
                calls.append(info)
                plan = (planned.h, planned.e, planned.approach)
            elif condition is Condition.ORACLE:
                plan = (situation.stance.h, situation.stance.e, "")
            if plan is None:
                prompt = load_prompt("collapse_instruct")
                user = Message(role="user", content=prompt.render(situation=situation.situation))
            else:
                prompt = load_prompt("collapse_answer_planned")
                user = planned_message(situation, *plan)
            try:
                text, info = await call_text(
                    llm, [*system, user], self.answer_params(arm), [*memory_prompts, prompt]
                )
            except (TruncatedOutputError, EmptyOutputError) as exc:
                exc.calls = [*calls, *exc.calls]  # the failed unit accounts the plan call too
                raise
            calls.append(info)
            return AnswerRecord(
                **base,
                plan_h=plan[0] if plan else None,
                plan_e=plan[1] if plan else None,
                plan_approach=plan[2] if plan else "",
                answer=text,
                calls=calls,
            )

        record = await self.unit(
            AnswerRecord, key, work, fallback=lambda e: AnswerRecord(**base, error=e)
        )
        if record.ok:
            await self.score(record, situation)

    async def score(self, answer: AnswerRecord, situation: Situation) -> ScoreRecord:
        key = f"score|{answer.model}|{answer.condition.value}|{answer.memory.value}|{situation.id}"
        base = {
            "unit": key,
            "model": answer.model,
            "judge": self.config.judge,
            "situation_id": situation.id,
            "context": situation.context,
            "condition": answer.condition,
            "memory": answer.memory,
        }

        async def work() -> ScoreRecord:
            prompt = load_prompt("collapse_judge")
            content = prompt.render(situation=situation.situation, answer=answer.answer)
            scored, info = await call_strict(
                self.client(self.config.judge, role="judge"),
                [Message(role="user", content=content)],
                StanceScore,
                self.judge_params(),
                [prompt],
            )
            return ScoreRecord(
                **base, h=scored.h, e=scored.e, rationale=scored.rationale, calls=[info]
            )

        return await self.unit(
            ScoreRecord, key, work, fallback=lambda e: ScoreRecord(**base, error=e)
        )

    # -- the whole run ----------------------------------------------------------------------

    async def run(self) -> RunSummary:
        manifest = self.run_dir.start(self.config, offline_models=self.offline_models)
        self._done = self.run_dir.final_units(retry_failed=self.options.retry_failed)
        self._failed_before, self._answered_before = self.run_dir.tries()
        try:
            async with anyio.create_task_group() as tg:
                for model in self.config.models:
                    for condition, arm in self.config.arms():
                        for situation in self.situations:
                            tg.start_soon(self.answer, model, condition, arm, situation)
        except BaseExceptionGroup as group:  # refused credentials: the error, not the group
            refused = first_leaf(group, LLMAuthError)
            if refused is None:
                raise
            raise refused from group
        finally:
            if self._tagger is not None:
                describe = getattr(self._tagger, "configuration", None)
                if isinstance(describe, dict):
                    manifest.guard = describe
                    self.run_dir.save_manifest(manifest)
                self._tagger.close()
            self.run_dir.close()
            for client in self.clients.values():
                await client.aclose()
        return self.summary
