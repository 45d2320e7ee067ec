"""Stage building blocks: Accum round plans, the guarded memory path, persona drafting, options."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from mirage_guard.benchmark._config import RuntimeOptions
from mirage_guard.benchmark._guard_arm import guard_memory_update
from mirage_guard.benchmark._persona_drafting import draft_persona
from mirage_guard.benchmark._records import StoredMemoryItem
from mirage_guard.benchmark._schemas import MemoryItem
from mirage_guard.benchmark._stages import Evidence, plan_round, render_memory
from mirage_guard.benchmark._tasks import Task, parse_tasks
from mirage_guard.benchmark.personas import Persona, PersonaGroup
from mirage_guard.guard._domain import Action, Candidate, Decision, Provenance, Turn
from mirage_guard.guard.errors import InputError, LLMOutputError
from mirage_guard.guard.llm import ScriptedLLM
from tests.benchmark.small_run import PERSONAS_FILE

FACT = StoredMemoryItem(text="Builds keyboards", basis="stated")
GUESS = StoredMemoryItem(text="Lives alone in a minimalist flat", basis="inferred")


def test_round_one_reveals_the_three_facts(small_personas: list[Persona]) -> None:
    p = small_personas[0]
    plan = plan_round(p, 1, [], rounds=8, seed=0)
    assert [e.turn_id for e in plan.new_evidence] == p.turn_ids
    assert all(f.text in plan.message for f in p.revealed_facts)
    assert plan.contradicted is None


def test_later_rounds_reveal_profile_and_contradict_an_inference(
    small_personas: list[Persona],
) -> None:
    p = small_personas[0]
    reveal = plan_round(p, 3, [FACT], rounds=8, seed=0)
    assert p.profile.living_situation in reveal.message
    assert reveal.new_evidence == [Evidence(f"{p.persona_id}-r3", reveal.new_evidence[0].text)]
    quiet = plan_round(p, 2, [FACT], rounds=8, seed=0)
    assert quiet.new_evidence == []
    assert quiet.message == Task.DATING.request()
    correction = plan_round(p, 5, [FACT, GUESS], rounds=8, seed=0)
    assert correction.contradicted == GUESS.text  # an inferred entry, not the stated one
    assert GUESS.text in correction.message
    assert plan_round(p, 5, [], rounds=8, seed=0).contradicted is None


def test_render_memory_marks_hypotheses() -> None:
    hyp = StoredMemoryItem(text="Likes tea", basis="inferred", status="hypothesis")
    assert render_memory([]) == "(empty)"
    assert render_memory([FACT, hyp]).splitlines() == [
        "- [stated] Builds keyboards",
        "- [inferred, unconfirmed hypothesis] Likes tea",
    ]


class _ByText:
    """A tagger that decides by candidate text, and records what it was asked."""

    def __init__(self, actions: dict[str, Action]) -> None:
        self.actions = actions
        self.asked: list[list[str]] = []

    async def atag(
        self,
        turns: Sequence[Turn],
        candidates: Sequence[Candidate],
        *,
        writer_model: str | None = None,
    ) -> list[Decision]:
        self.asked.append([c.text for c in candidates])
        out = []
        for c in candidates:
            action = self.actions[c.text]
            provenance = {
                Action.STORE: Provenance.STATED,
                Action.STORE_AS_HYPOTHESIS: Provenance.INFERRED,
            }.get(action, Provenance.GENERATED)
            out.append(
                Decision(
                    candidate=c,
                    provenance=provenance,
                    action=action,
                    source_turn_id=None if provenance is Provenance.GENERATED else turns[0].id,
                    similarity=0.5,
                    evidence_span=None,
                    score=0.5,
                    threshold=0.5,
                    profile_id="p",
                    calibrated=True,
                )
            )
        return out

    def close(self) -> None:
        return None


async def test_guarded_memory_update_keeps_only_what_the_guard_allows() -> None:
    tagger = _ByText(
        {
            "Likes tea": Action.STORE_AS_HYPOTHESIS,
            "Has two sisters": Action.QUARANTINE,
            "Builds keyboards": Action.STORE,
        }
    )
    evidence = [Evidence("t1", "I build keyboards.")]
    proposed = [
        MemoryItem(text="builds keyboards!", basis="stated"),
        MemoryItem(text="Likes tea"),
        MemoryItem(text="Has two sisters"),
        MemoryItem(text="\u200b..."),  # says nothing: not tagged (the guard refuses it), dropped
    ]
    kept, dropped = await guard_memory_update(
        tagger, evidence, [FACT], proposed, writer_model="m", round_no=2
    )
    assert tagger.asked == [["Likes tea", "Has two sisters"]]  # kept entries are not re-tagged
    assert [(k.text, k.status) for k in kept] == [
        ("Builds keyboards", "fact"),
        ("Likes tea", "hypothesis"),
    ]
    assert dropped == ["\u200b...", "Has two sisters"]
    unguarded, none = await guard_memory_update(
        None, evidence, [FACT], proposed, writer_model="m", round_no=2
    )
    assert [k.text for k in unguarded] == [p.text for p in proposed]
    assert none == []


async def test_draft_persona_validates_the_schema(small_personas: list[Persona]) -> None:
    row = json.loads(PERSONAS_FILE.read_text().splitlines()[1])
    good = ScriptedLLM([json.dumps(row)])
    persona = await draft_persona(
        good, group=PersonaGroup.COUNTER, occupation="engineer", persona_id=row["persona_id"]
    )
    assert persona == small_personas[1]
    assert "counter" in good.calls[0].messages[0].content
    with pytest.raises(LLMOutputError, match="asked for"):
        await draft_persona(
            ScriptedLLM([json.dumps(row)]),
            group=PersonaGroup.COUNTER,
            occupation="engineer",
            persona_id="ct-999",
        )
    with pytest.raises(LLMOutputError):
        await draft_persona(
            ScriptedLLM(['{"persona_id": "ct-001"}']),
            group=PersonaGroup.COUNTER,
            occupation="x",
            persona_id="ct-001",
        )


def test_api_base_goes_to_vllm_models_unless_set_per_model() -> None:
    options = RuntimeOptions(
        api_base="http://gpu:8000/v1", api_bases={"openai/gpt-4o-mini": "http://proxy/v1"}
    )
    assert options.api_base_for("hosted_vllm/Qwen/Qwen3-8B") == "http://gpu:8000/v1"
    assert options.api_base_for("openai/gpt-4o-mini") == "http://proxy/v1"
    assert options.api_base_for("anthropic/claude-opus-4-6") is None


def test_parse_tasks() -> None:
    assert parse_tasks(None) == list(Task)
    assert parse_tasks(["gift, letter", "apartment"]) == [Task.GIFT, Task.LETTER, Task.APARTMENT]
    with pytest.raises(InputError, match="unknown task"):
        parse_tasks(["poem"])
    assert "$100" in Task.GIFT.request()


def test_cli_api_base_items() -> None:
    from mirage_guard.adapters.cli._bench import parse_api_bases

    assert parse_api_bases(["http://gpu:8000/v1", "openai/gpt-4o=http://p/v1?a=b"]) == (
        "http://gpu:8000/v1",
        {"openai/gpt-4o": "http://p/v1?a=b"},
    )
    assert parse_api_bases(None) == (None, {})


def test_reasoning_blocks_are_stripped() -> None:
    from mirage_guard.benchmark._stages import strip_reasoning

    assert strip_reasoning("<think>they said nurse\nso...</think>\n\nA candle.") == "A candle."
    assert strip_reasoning("No thinking here.") == "No thinking here."
