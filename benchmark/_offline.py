"""An offline provider that answers every MirageBench stage by rule (``mock/...`` models).

It exists so a user can dry-run a configuration end to end without keys, and so the perf
harness and the tests have a provider. Its answers are deterministic functions of the prompt:
they exercise the pipeline and are **not** measurements of any model; runs that use it say so
in their manifest and report.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

from pydantic import BaseModel

from mirage_guard.benchmark._schemas import (
    JudgeOutput,
    MemoryUpdateOutput,
    ProbeOutput,
    SelfAuditOutput,
    SentenceJudgement,
    SentenceSelfAudit,
)
from mirage_guard.guard.llm import FunctionLLM, Message

OFFLINE_PREFIX = "mock/"

# Generic statements about a user that no revealed fact supports (the mock's "over-inference").
_INVENTIONS: tuple[str, ...] = (
    "You probably unwind with a good book and a cup of tea.",
    "You likely have a close-knit group of old friends.",
    "You seem like someone who keeps a tidy, organised home.",
    "You are probably an early riser.",
    "You likely grew up in a small town.",
    "You strike me as a natural leader at work.",
    "You probably have a sibling you talk to every week.",
    "Your shelves are likely full of travel souvenirs.",
)
_LABEL_CYCLE = ("INFERRED_REASONABLE", "INFERRED_STEREOTYPE", "FABRICATED")
_ACCURACY_CYCLE = ("UNVERIFIABLE", "INCORRECT", "UNVERIFIABLE", "PARTIALLY_CORRECT")


def _h(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [p.strip(" -") for p in parts if len(p.strip(" -").split()) >= 3]


def _fact_lines(text: str) -> list[tuple[str | None, str]]:
    """``[turn] text`` lines (judge prompt) or ``- text`` bullet lines (other prompts)."""
    facts: list[tuple[str | None, str]] = []
    for line in text.splitlines():
        tagged = re.match(r"^\[([^\]]+)\] (.+)$", line.strip())
        if tagged:
            facts.append((tagged.group(1), tagged.group(2)))
    return facts


def _bullets(text: str) -> list[str]:
    return [line[2:].strip() for line in text.splitlines() if line.startswith("- ")]


def _between(text: str, start: str, end: str) -> str:
    i = text.find(start)
    j = text.find(end, i + len(start)) if i >= 0 else -1
    return text[i + len(start) : j] if i >= 0 and j >= 0 else ""


def _task_answer(prompt: str, salt: str) -> str:
    facts = _bullets(prompt)
    n_invented = 1 + _h(salt + prompt) % 4
    start = _h(prompt[::-1] + salt) % len(_INVENTIONS)
    sentences = [f"Since you mentioned it: {fact.rstrip('.')}." for fact in facts[:2]]
    sentences += [_INVENTIONS[(start + k) % len(_INVENTIONS)] for k in range(n_invented)]
    return " ".join(sentences)


def _judged(sentence: str, facts: Sequence[tuple[str | None, str]]) -> dict[str, str | None]:
    """The offline judge's reading of one sentence: grounded when it quotes a fact."""
    source = next((tid for tid, text in facts if text.rstrip(".")[:40] in sentence), None)
    if source is not None:
        label, accuracy = "GROUNDED", "CORRECT"
    else:
        label = _LABEL_CYCLE[_h(sentence) % 3]
        accuracy = _ACCURACY_CYCLE[_h(sentence + "a") % 4]
    return {"text": sentence, "label": label, "source_turn_id": source, "accuracy": accuracy}


def _judge_facts(prompt: str) -> list[tuple[str | None, str]]:
    return _fact_lines(_between(prompt, "each with its turn id:", "THE ASSISTANT WAS ASKED"))


def _judge_answer(prompt: str) -> str:
    facts = _judge_facts(prompt)
    output = _between(prompt, "<<<", ">>>")
    return json.dumps({"claims": [_judged(s, facts) for s in _sentences(output)]})


def _audited(sentence: str) -> dict[str, str | float]:
    """The offline model's own label of one of its sentences; it under-reports: it calls most
    of its own inventions reasonable."""
    if sentence.startswith("Since you mentioned it"):
        label = "GROUNDED"
    else:
        label = "FABRICATED" if _h(sentence) % 4 == 0 else "INFERRED_REASONABLE"
    return {"text": sentence, "label": label, "confidence": 0.5 + _h(sentence) % 50 / 100}


def _self_audit_answer(messages: Sequence[Message]) -> str:
    answer = next((m.content for m in reversed(messages) if m.role == "assistant"), "")
    return json.dumps({"claims": [_audited(s) for s in _sentences(answer)]})


def _numbered_lines(text: str) -> list[str]:
    """The ``N. sentence`` lines of a ``--claim-units sentences`` prompt, in order."""
    return [m.group(1) for m in re.finditer(r"^\d+\. (.+)$", text, flags=re.M)]


def _claim_of(sentence: str) -> str | None:
    """The sentence as the free-claim answers would take it (None: too short to be a claim)."""
    found = _sentences(sentence)
    return found[0] if found else None


def _self_audit_sentences_answer(prompt: str) -> str:
    items = []
    for n, sentence in enumerate(_numbered_lines(prompt), start=1):
        claim = _claim_of(sentence)
        a = _audited(claim) if claim else {"label": "NO_CLAIM", "confidence": 1.0}
        items.append({"n": n, "label": a["label"], "confidence": a["confidence"]})
    return json.dumps({"sentences": items})


def _judge_sentences_answer(prompt: str) -> str:
    facts = _judge_facts(prompt)
    items = []
    for n, sentence in enumerate(_numbered_lines(_between(prompt, "<<<", ">>>")), start=1):
        claim = _claim_of(sentence)
        j = _judged(claim, facts) if claim else {"label": "NO_CLAIM", "source_turn_id": None}
        items.append(
            {
                "n": n,
                "label": j["label"],
                "source_turn_id": j["source_turn_id"],
                "accuracy": j.get("accuracy", "UNVERIFIABLE"),
            }
        )
    return json.dumps({"sentences": items})


_PROBE_CYCLE = ("reasonable", "stereotypical", "fabricated")


def _probe_answer(prompt: str) -> str:
    items = [
        {"claim": f, "basis": "stated", "reason": "the user said so"} for f in _bullets(prompt)
    ]
    items.append(
        {
            "claim": _INVENTIONS[_h(prompt) % len(_INVENTIONS)],
            "basis": _PROBE_CYCLE[_h("probe" + prompt) % len(_PROBE_CYCLE)],
            "reason": "a common pattern",
        }
    )
    return json.dumps({"items": items})


def _memory_answer(prompt: str) -> str:
    memory_block = _between(prompt, "CURRENT MEMORY", "THE USER'S NEW MESSAGE")
    message = _between(prompt, "<<<", ">>>")
    memory: list[dict[str, str]] = []
    for line in memory_block.splitlines():
        tagged = re.match(r"^- \[(stated|inferred)[^\]]*\] (.+)$", line.strip())
        if tagged:
            memory.append({"text": tagged.group(2), "basis": tagged.group(1)})
    free = "free to add, revise" in prompt
    wrong = re.search(r'think "(.+?)"', message, flags=re.S)
    if wrong and free:
        memory = [m for m in memory if m["text"] != wrong.group(1)]
    for fact in _bullets(message):
        memory.append({"text": fact, "basis": "stated"})
    for sentence in _sentences(message):
        if sentence.startswith("Something I haven't mentioned"):
            memory.append({"text": sentence, "basis": "stated"})
    invention = _INVENTIONS[_h(message) % len(_INVENTIONS)]
    if all(m["text"] != invention for m in memory):
        memory.append({"text": invention, "basis": "inferred"})
    if free and len(memory) > 6:
        memory = memory[-6:]
    return json.dumps({"reply": "Noted.", "memory": memory})


def offline_answer(
    messages: Sequence[Message], schema: type[BaseModel] | None, *, salt: str = ""
) -> str:
    """The rule: one deterministic answer per stage, recognised by its output schema.

    ``salt`` (the model name) makes different mock models answer differently.
    """
    prompt = messages[-1].content
    if schema is JudgeOutput:
        return _judge_answer(prompt)
    if schema is SelfAuditOutput:
        return _self_audit_answer(messages)
    if schema is not None and issubclass(schema, SentenceJudgement):
        return _judge_sentences_answer(prompt)
    if schema is not None and issubclass(schema, SentenceSelfAudit):
        return _self_audit_sentences_answer(prompt)
    if schema is ProbeOutput:
        return _probe_answer(prompt)
    if schema is MemoryUpdateOutput:
        return _memory_answer(prompt)
    return _task_answer(prompt, salt)


def offline_llm(model: str, *, latency_s: float = 0.0) -> FunctionLLM:
    """A ``mock/...`` model answering every stage by :func:`offline_answer`."""

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        return offline_answer(messages, schema, salt=model)

    return FunctionLLM(rule, model=model, latency_s=latency_s)


def is_offline(model: str) -> bool:
    return model.startswith(OFFLINE_PREFIX)
