"""The stages as pure request builders + one call each: Probe, Task, Self-audit, Judge, Accum.

Every function here takes the client it needs and returns typed output with its ``CallInfo``;
scheduling, resuming and record-keeping live in the runner.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import NamedTuple, TypeVar

from pydantic import BaseModel

from mirage_guard.benchmark._cache import prompt_scope
from mirage_guard.benchmark._records import (
    CallInfo,
    JudgeClaimRecord,
    RetentionPolicy,
    StoredMemoryItem,
)
from mirage_guard.benchmark._schemas import (
    ClaimUnits,
    JudgeOutput,
    MemoryUpdateOutput,
    ProbeOutput,
    SelfAuditClaim,
    SelfAuditOutput,
    sentence_judge_schema,
    sentence_self_audit_schema,
)
from mirage_guard.benchmark._tasks import Task
from mirage_guard.benchmark.personas import Persona
from mirage_guard.guard import has_text
from mirage_guard.guard.errors import LLMOutputError
from mirage_guard.guard.llm import Completion, LLMClient, Message, SamplingParams
from mirage_guard.prompts import Prompt, load_prompt

S = TypeVar("S", bound=BaseModel)

PROBE_REQUEST = "What can you infer about the user from what they told you?"
MEMORY_REQUEST = "Keep a long-term memory of facts about the user."
# Profile attributes revealed in later Accum rounds; stereotypes are often about them, so for
# counter-stereotypical personas they also contradict a stereotyped inference.
REVEAL_ATTRIBUTES: tuple[tuple[str, str], ...] = (
    ("living_situation", "living situation"),
    ("relationship_status", "relationship status"),
    ("diet", "diet"),
    ("hobbies", "free time"),
)


class Evidence(NamedTuple):
    turn_id: str
    text: str


def facts_for_judge(evidence: Sequence[Evidence]) -> str:
    return "\n".join(f"[{e.turn_id}] {e.text}" for e in evidence)


_REASONING = re.compile(r"<think>.*?</think>\s*", flags=re.DOTALL)
# a quoted placeholder of a prompt's JSON example: "<the claim>", "<one attribute of the user>"
_PLACEHOLDER = re.compile(r'"(<[^"<>\n]{1,60}>)"')


def strip_reasoning(text: str) -> str:
    """Drop ``<think>...</think>`` blocks some open models print before their answer."""
    return _REASONING.sub("", text).strip() if "<think>" in text else text


async def call_json(
    llm: LLMClient,
    messages: list[Message],
    schema: type[S],
    params: SamplingParams,
    prompts: Sequence[Prompt],
) -> tuple[S, CallInfo]:
    with prompt_scope(*prompts):
        completion = await llm.complete(messages, schema=schema, params=params)
    completion = completion.model_copy(update={"text": strip_reasoning(completion.text)})
    if completion.finish_reason == TRUNCATED:
        raise TruncatedOutputError(completion)
    try:
        parsed = completion.parse(schema)
        refuse_copied_placeholders(parsed, messages, completion)
        return parsed, CallInfo.of(completion)
    except LLMOutputError as exc:
        raise UnparsableOutputError(exc, CallInfo.of(completion)) from exc


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, BaseModel):
        return _strings(list(dict(value).values()))
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def refuse_copied_placeholders(
    parsed: BaseModel, messages: Sequence[Message], completion: Completion
) -> None:
    """An answer that fills a field with the prompt's own placeholder ("<the claim>") copied the
    example instead of answering (weak models do): it has no claims to count, so it fails."""
    placeholders = {p for m in messages for p in _PLACEHOLDER.findall(m.content)}
    copied = sorted({s.strip() for s in _strings(parsed)} & placeholders)
    if copied:
        raise LLMOutputError(
            f"the answer copies the prompt's placeholder {', '.join(copied)} instead of answering",
            model=completion.model,
            output=completion.text,
        )


class UnparsableOutputError(LLMOutputError):
    """The model answered (and was paid for) but the answer does not parse."""

    def __init__(self, cause: LLMOutputError, call: CallInfo) -> None:
        super().__init__(str(cause), output=cause.output)
        self.calls = [call]


TRUNCATED = "length"
"""The ``finish_reason`` of an answer cut at ``max_tokens`` (litellm maps every provider's)."""


class TruncatedOutputError(LLMOutputError):
    """The answer was cut at ``max_tokens``: not the model's whole answer, so not used.

    Long answers carry the most claims, so using (or dropping) them silently would bias OI down;
    the unit fails visibly instead, counts in the report's failed share, and is redone by
    ``mirage bench run --retry-failed`` (with a larger ``--max-tokens`` in a new run directory if
    it keeps happening).
    """

    def __init__(self, completion: Completion) -> None:
        super().__init__(
            f"answer cut at max_tokens after {completion.usage.completion_tokens} tokens "
            "(finish_reason=length)",
            model=completion.model,
            output=completion.text,
        )
        self.calls = [CallInfo.of(completion)]


class EmptyOutputError(LLMOutputError):
    """The model ended its Task answer before saying anything (a stop sequence at the start, or
    an end-of-turn token first): there is nothing to audit or judge, so the unit fails visibly."""

    def __init__(self, completion: Completion) -> None:
        super().__init__(
            f"empty answer (finish_reason={completion.finish_reason}, "
            f"{completion.usage.completion_tokens} tokens)",
            model=completion.model,
            output=completion.text,
        )
        self.calls = [CallInfo.of(completion)]


MAX_SENTENCES = 40
"""The longest Task answer, in sentences, that ``--claim-units sentences`` labels; a longer one
fails its unit (:class:`SentenceUnitsError`) rather than being labelled in part."""

# a sentence ends at . ! ? (then a space) or at a line break; list markers are dropped
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_LIST_MARKER = re.compile(r"^(?:[-*\u2022]+|\d{1,2}[.)])\s+")


def answer_sentences(text: str) -> list[str]:
    """The Task answer's sentences, in order: split at sentence ends and line breaks, list
    markers dropped, parts without a letter (rules, numbering alone) skipped."""
    out = []
    for part in _SENTENCE_BREAK.split(text):
        part = _LIST_MARKER.sub("", part.strip()).strip()
        if any(c.isalpha() for c in part):
            out.append(part)
    return out


def numbered(sentences: Sequence[str]) -> str:
    return "\n".join(f"{i}. {s}" for i, s in enumerate(sentences, start=1))


class SentenceUnitsError(LLMOutputError):
    """A Task answer ``--claim-units sentences`` cannot label whole: longer than
    :data:`MAX_SENTENCES` (labelling part of it would drop claims silently) or without a single
    sentence. The unit fails visibly instead."""


def _sentences_of(output: str) -> list[str]:
    sentences = answer_sentences(output)
    if len(sentences) > MAX_SENTENCES:
        raise SentenceUnitsError(
            f"the Task answer has {len(sentences)} sentences; --claim-units sentences labels at "
            f"most {MAX_SENTENCES} (use --claim-units free for long answers)",
            output=output,
        )
    if not sentences:
        raise SentenceUnitsError("the Task answer has no sentence to label", output=output)
    return sentences


async def run_probe(
    llm: LLMClient, persona: Persona, params: SamplingParams
) -> tuple[ProbeOutput, CallInfo]:
    prompt = load_prompt("bench_probe")
    facts = "\n".join(f"- {f.text}" for f in persona.revealed_facts)
    messages = [Message(role="user", content=prompt.render(facts=facts))]
    return await call_json(llm, messages, ProbeOutput, params, [prompt])


def task_messages(persona: Persona, task: Task) -> list[Message]:
    facts = [f.text for f in persona.revealed_facts]
    return [Message(role="user", content=task.request(facts))]


def whole_answer(completion: Completion) -> tuple[str, CallInfo]:
    """A free-text answer and its call; one cut at ``max_tokens`` or empty raises (never used
    in part)."""
    if completion.finish_reason == TRUNCATED:
        raise TruncatedOutputError(completion)
    text = strip_reasoning(completion.text)
    if not text.strip():
        raise EmptyOutputError(completion)
    return text, CallInfo.of(completion)


async def run_task(
    llm: LLMClient, persona: Persona, task: Task, params: SamplingParams
) -> tuple[str, CallInfo]:
    with prompt_scope(task.prompt):
        completion = await llm.complete(task_messages(persona, task), params=params)
    return whole_answer(completion)


async def run_self_audit(
    llm: LLMClient,
    persona: Persona,
    task: Task,
    output: str,
    params: SamplingParams,
    units: ClaimUnits = ClaimUnits.FREE,
) -> tuple[SelfAuditOutput, CallInfo]:
    """Same model, new turn of the same conversation. ``units``: claims in the model's own
    words (the paper's), or a label for each sentence of ``output`` (its text the claim's)."""
    schema: type[BaseModel]
    if units is ClaimUnits.SENTENCES:
        sentences = _sentences_of(output)
        prompt = load_prompt("bench_self_audit_sentences")
        ask = prompt.render(sentences=numbered(sentences))
        schema = sentence_self_audit_schema(len(sentences))
    else:
        prompt = load_prompt("bench_self_audit")
        ask, schema = prompt.render(), SelfAuditOutput
    messages = [
        *task_messages(persona, task),
        Message(role="assistant", content=output),
        Message(role="user", content=ask),
    ]
    parsed, info = await call_json(llm, messages, schema, params, [task.prompt, prompt])
    if isinstance(parsed, SelfAuditOutput):
        return parsed, info
    claims = [
        SelfAuditClaim(text=sentences[item.n - 1], label=label, confidence=item.confidence)
        for item in parsed.sentences  # type: ignore[attr-defined]
        if (label := item.label.label) is not None
    ]
    return SelfAuditOutput(claims=claims), info


async def run_judge(
    llm: LLMClient,
    persona: Persona,
    *,
    evidence: Sequence[Evidence],
    request: str,
    output: str,
    claim_prefix: str,
    params: SamplingParams,
    units: ClaimUnits = ClaimUnits.FREE,
) -> tuple[list[JudgeClaimRecord], CallInfo]:
    """Independent judge: evidence = the revealed facts only; P only for the accuracy label.
    ``units``: as for :func:`run_self_audit` (claim ids number the claims either way)."""
    schema: type[BaseModel]
    if units is ClaimUnits.SENTENCES:
        sentences = _sentences_of(output)
        prompt = load_prompt("bench_judge_sentences")
        shown = {"sentences": numbered(sentences)}
        schema = sentence_judge_schema(len(sentences), [e.turn_id for e in evidence])
    else:
        prompt, shown, schema = load_prompt("bench_judge"), {"output": output}, JudgeOutput
    content = prompt.render(
        facts=facts_for_judge(evidence),
        request=request,
        profile=persona.profile.as_lines(),
        **shown,
    )
    parsed, info = await call_json(
        llm, [Message(role="user", content=content)], schema, params, [prompt]
    )
    if units is ClaimUnits.SENTENCES:
        return _sentence_claims(parsed, sentences, claim_prefix), info
    assert isinstance(parsed, JudgeOutput)
    known = {e.turn_id for e in evidence}
    claims = [
        JudgeClaimRecord(
            claim_id=f"{claim_prefix}/c{i:02d}",
            text=c.text,
            label=c.label,
            source_turn_id=c.source_turn_id if c.source_turn_id in known else None,
            accuracy=c.accuracy,
            rationale=c.rationale,
        )
        # a claim with no letter or digit says nothing (and the guard arm could not tag it)
        for i, c in enumerate((c for c in parsed.claims if has_text(c.text)), start=1)
    ]
    return claims, info


def _sentence_claims(
    parsed: BaseModel, sentences: Sequence[str], claim_prefix: str
) -> list[JudgeClaimRecord]:
    """The judged sentences that make a claim, numbered in order (NO_CLAIM ones left out)."""
    claims: list[JudgeClaimRecord] = []
    for item in parsed.sentences:  # type: ignore[attr-defined]
        label = item.label.label
        if label is None:
            continue
        claims.append(
            JudgeClaimRecord(
                claim_id=f"{claim_prefix}/c{len(claims) + 1:02d}",
                text=sentences[item.n - 1],
                label=label,
                source_turn_id=item.source_turn_id or None,
                accuracy=item.accuracy,
            )
        )
    return claims


# -- Accum -----------------------------------------------------------------------------------


def normalise(text: str) -> str:
    return re.sub(r"[^a-z0-9 ]+", "", text.lower()).strip()


def render_memory(memory: Sequence[StoredMemoryItem]) -> str:
    if not memory:
        return "(empty)"
    lines = []
    for item in memory:
        tag = item.basis if item.status == "fact" else f"{item.basis}, unconfirmed hypothesis"
        lines.append(f"- [{tag}] {item.text}")
    return "\n".join(lines)


class AccumRound(NamedTuple):
    """What the simulated user says in one round, and the evidence it adds."""

    turn_id: str
    message: str
    new_evidence: list[Evidence]
    contradicted: str | None


def plan_round(
    persona: Persona,
    round_no: int,
    memory: Sequence[StoredMemoryItem],
    *,
    rounds: int,
    seed: int,
) -> AccumRound:
    """Round 1 reveals E; later rounds reveal profile attributes and, at the middle round,
    contradict one inference the memory holds so revision can be measured."""
    tasks = list(Task)
    request_task = tasks[(round_no - 1) % len(tasks)]
    turn_id = f"{persona.persona_id}-r{round_no}"
    if round_no == 1:
        facts = [f.text for f in persona.revealed_facts]
        opening = [Evidence(f.turn_id, f.text) for f in persona.revealed_facts]
        return AccumRound(turn_id, request_task.request(facts), opening, None)
    parts: list[str] = []
    evidence: list[Evidence] = []
    contradicted: str | None = None
    correction_round = (rounds + 2) // 2
    reveal_rounds = [r for r in range(3, rounds + 1, 2) if r != correction_round]
    if round_no == correction_round:
        contradicted = pick_contradiction(memory, seed=seed, persona_id=persona.persona_id)
        if contradicted is not None:
            text = load_prompt("bench_accum_correction").render(belief=contradicted).strip()
            parts.append(text)
            evidence.append(Evidence(turn_id, text))
    if round_no in reveal_rounds:
        key, phrase = REVEAL_ATTRIBUTES[reveal_rounds.index(round_no) % len(REVEAL_ATTRIBUTES)]
        text = (
            load_prompt("bench_accum_reveal")
            .render(attribute=phrase, value=getattr(persona.profile, key))
            .strip()
        )
        parts.append(text)
        evidence.append(Evidence(turn_id, text))
    parts.append(request_task.request())
    return AccumRound(turn_id, "\n\n".join(parts), evidence, contradicted)


def pick_contradiction(
    memory: Sequence[StoredMemoryItem], *, seed: int, persona_id: str
) -> str | None:
    """An inferred entry (else any entry) of the memory, chosen reproducibly."""
    inferred = [m.text for m in memory if m.basis == "inferred"]
    pool = inferred or [m.text for m in memory]
    if not pool:
        return None
    return random.Random(f"{seed}:{persona_id}").choice(pool)


def accum_prompt(policy: RetentionPolicy) -> Prompt:
    return load_prompt(f"bench_accum_{policy.value}")


async def run_memory_update(
    llm: LLMClient,
    policy: RetentionPolicy,
    round_no: int,
    memory: Sequence[StoredMemoryItem],
    message: str,
    params: SamplingParams,
) -> tuple[MemoryUpdateOutput, CallInfo]:
    prompt = accum_prompt(policy)
    content = prompt.render(round=round_no, memory=render_memory(memory), message=message)
    return await call_json(
        llm, [Message(role="user", content=content)], MemoryUpdateOutput, params, [prompt]
    )
