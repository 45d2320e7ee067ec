"""--claim-units sentences: the self-audit and the judge label the Task answer's own numbered
sentences, fixed by the schema, so the two align exactly (even for a model that cannot write
claims of its own)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from mirage_guard.benchmark._records import JudgeRecord, SelfAuditRecord
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._schemas import (
    ClaimUnits,
    SentenceJudgement,
    SentenceLabel,
    SentenceSelfAudit,
    sentence_judge_schema,
    sentence_self_audit_schema,
)
from mirage_guard.benchmark._self_audit_pairs import align_self_audit
from mirage_guard.benchmark._stages import (
    MAX_SENTENCES,
    Evidence,
    SentenceUnitsError,
    answer_sentences,
    run_judge,
    run_self_audit,
)
from mirage_guard.benchmark._tasks import Task
from mirage_guard.benchmark.personas import Persona
from mirage_guard.guard import Label
from mirage_guard.guard.llm import FunctionLLM, Message, SamplingParams
from mirage_guard.guard.llm._structured import StructuredMode, response_format
from tests.benchmark.small_run import small_config
from tests.fakes.bench import SUBJECTS, offline_rule

SUBJECT = SUBJECTS[0]
PARAMS = SamplingParams(temperature=0.0, max_tokens=400)
ANSWER = (
    "Gift ideas:\n"
    "1. A vegan cookbook, since you cook every night.\n"
    "- A reading lamp. You are surely a night owl!\n"
    "---\n"
    "Enjoy"
)
SENTENCES = [
    "Gift ideas:",
    "A vegan cookbook, since you cook every night.",
    "A reading lamp.",
    "You are surely a night owl!",
    "Enjoy",
]


def test_an_answer_splits_at_sentence_ends_and_lines_without_list_markers() -> None:
    assert answer_sentences(ANSWER) == SENTENCES
    assert answer_sentences("  \n--- \n42.\n") == []


def test_the_schema_fixes_the_numbering_and_the_count() -> None:
    schema = sentence_self_audit_schema(2)
    ok = {"sentences": [{"n": 1, "label": "GROUNDED", "confidence": 0.9},
                        {"n": 2, "label": "NO_CLAIM", "confidence": 1.0}]}  # fmt: skip
    assert issubclass(schema, SentenceSelfAudit)
    schema.model_validate(ok)
    for bad in (
        {"sentences": ok["sentences"][::-1]},  # out of order
        {"sentences": ok["sentences"][:1]},  # one missing
        {"sentences": [*ok["sentences"], {"n": 3, "label": "GROUNDED", "confidence": 1}]},
        {"sentences": [ok["sentences"][0], {**ok["sentences"][1], "label": "MAYBE"}]},
        {"sentences": [ok["sentences"][0], {**ok["sentences"][1], "confidence": 1.5}]},
    ):
        with pytest.raises(ValidationError):
            schema.model_validate(bad)


def test_the_judge_schema_allows_only_the_personas_turn_ids() -> None:
    schema = sentence_judge_schema(1, ["p-t1", "p-t2"])
    item = {"n": 1, "label": "GROUNDED", "source_turn_id": "p-t2", "accuracy": "CORRECT"}
    assert issubclass(schema, SentenceJudgement)
    schema.model_validate({"sentences": [item]})
    schema.model_validate({"sentences": [{**item, "source_turn_id": None}]})
    with pytest.raises(ValidationError):
        schema.model_validate({"sentences": [{**item, "source_turn_id": "other-t1"}]})


def test_the_grammar_schema_keeps_the_constants_and_enums() -> None:
    """llama.cpp compiles the json_object schema into a grammar: the sentence numbers (const) and
    the label and turn-id enums must survive the grammar-safe rewrite."""
    sent = response_format(
        StructuredMode.JSON_OBJECT_SCHEMA, sentence_judge_schema(2, ["p-t1", "p-t2"])
    )
    assert sent is not None
    defs = sent["schema"]["$defs"]
    assert defs["JudgedSentence2"]["properties"]["n"]["const"] == 2
    assert defs["SentenceLabel"]["enum"] == [label.value for label in SentenceLabel]
    turn = defs["JudgedSentence1"]["properties"]["source_turn_id"]["anyOf"]
    assert {"enum": ["p-t1", "p-t2"], "type": "string"} in turn


def test_sentence_labels_are_the_taxonomy_and_no_claim() -> None:
    assert [s.label for s in SentenceLabel if s.label] == list(Label)
    assert SentenceLabel.NO_CLAIM.label is None


def _answers(audit: list[str], judge: list[tuple[str, str | None]]) -> FunctionLLM:
    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        assert schema is not None
        if issubclass(schema, SentenceSelfAudit):
            items = [
                {"n": i, "label": label, "confidence": 0.5 + i / 100}
                for i, label in enumerate(audit, start=1)
            ]
        else:
            assert issubclass(schema, SentenceJudgement)
            items = [
                {"n": i, "label": label, "source_turn_id": turn, "accuracy": "UNVERIFIABLE"}
                for i, (label, turn) in enumerate(judge, start=1)
            ]
        return json.dumps({"sentences": items})

    return FunctionLLM(rule)


async def test_self_audit_claims_are_the_labelled_sentences(
    small_personas: list[Persona],
) -> None:
    llm = _answers(["NO_CLAIM", "GROUNDED", "NO_CLAIM", "INFERRED_STEREOTYPE", "NO_CLAIM"], [])
    out, info = await run_self_audit(
        llm, small_personas[0], Task.GIFT, ANSWER, PARAMS, units=ClaimUnits.SENTENCES
    )
    assert [(c.text, c.label, c.confidence) for c in out.claims] == [
        (SENTENCES[1], Label.GROUNDED, 0.52),
        (SENTENCES[3], Label.INFERRED_STEREOTYPE, 0.54),
    ]
    assert info.model == llm.model
    (call,) = llm.calls
    assert "1. Gift ideas:\n2. A vegan cookbook" in call.messages[-1].content
    assert call.messages[-2].content == ANSWER  # the answer itself stays in the conversation


async def test_judge_claims_are_the_labelled_sentences_numbered_in_order(
    small_personas: list[Persona],
) -> None:
    persona = small_personas[0]
    fact = persona.revealed_facts[0]
    judged = [("NO_CLAIM", None), ("GROUNDED", fact.turn_id), ("FABRICATED", None),
              ("INFERRED_REASONABLE", fact.turn_id), ("NO_CLAIM", None)]  # fmt: skip
    llm = _answers([], judged)
    claims, _ = await run_judge(
        llm,
        persona,
        evidence=[Evidence(fact.turn_id, fact.text)],
        request="gift ideas",
        output=ANSWER,
        claim_prefix="m/p/gift",
        params=PARAMS,
        units=ClaimUnits.SENTENCES,
    )
    assert [(c.claim_id, c.text, c.label, c.source_turn_id) for c in claims] == [
        ("m/p/gift/c01", SENTENCES[1], Label.GROUNDED, fact.turn_id),
        ("m/p/gift/c02", SENTENCES[2], Label.FABRICATED, None),
        ("m/p/gift/c03", SENTENCES[3], Label.INFERRED_REASONABLE, fact.turn_id),
    ]
    prompt = llm.calls[0].messages[0].content
    assert f"[{fact.turn_id}] {fact.text}" in prompt
    assert "5. Enjoy" in prompt


async def test_a_judged_claim_with_no_letter_or_digit_is_no_claim(
    small_personas: list[Persona],
) -> None:
    """The guard arm tags every judged claim, and a text that states nothing ("...", a
    zero-width space) cannot be a candidate: such a claim is left out, the rest numbered."""
    judged = {"claims": [
        {"text": "Likes tea", "label": "GROUNDED"},
        {"text": "\u200b...", "label": "FABRICATED"},
        {"text": "Has two cats", "label": "FABRICATED"},
    ]}  # fmt: skip
    llm = FunctionLLM(lambda messages, schema: json.dumps(judged), model="judge/m")
    claims, _ = await run_judge(
        llm, small_personas[0], evidence=[], request="r", output=ANSWER, claim_prefix="x",
        params=PARAMS,
    )  # fmt: skip
    assert [(c.claim_id, c.text) for c in claims] == [
        ("x/c01", "Likes tea"),
        ("x/c02", "Has two cats"),
    ]


async def test_an_answer_too_long_to_label_whole_fails_before_any_call(
    small_personas: list[Persona],
) -> None:
    llm = _answers([], [])
    long_answer = " ".join(f"Sentence number {i} is here." for i in range(MAX_SENTENCES + 1))
    with pytest.raises(SentenceUnitsError, match=f"{MAX_SENTENCES + 1} sentences"):
        await run_self_audit(
            llm, small_personas[0], Task.GIFT, long_answer, PARAMS, units=ClaimUnits.SENTENCES
        )
    with pytest.raises(SentenceUnitsError, match="no sentence"):
        await run_judge(
            llm, small_personas[0], evidence=[], request="r", output="--- 42", claim_prefix="x",
            params=PARAMS, units=ClaimUnits.SENTENCES,
        )  # fmt: skip
    assert llm.calls == []


def test_free_runs_keep_their_hash_and_sentences_change_it() -> None:
    plain = small_config()
    before = plain.model_dump(mode="json")
    del before["samples"], before["task_stop"], before["claim_units"]  # a pre-option config
    blob = json.dumps(before, sort_keys=True).encode()
    assert plain.config_hash() == hashlib.sha256(blob).hexdigest()[:16]
    assert plain.config_hash() != small_config(claim_units="sentences").config_hash()


async def test_a_sentence_run_aligns_every_sentence_both_stages_labelled(
    tmp_path: Path, make_run: object
) -> None:
    """The offline models answer the sentence schemas; from-bench's alignment then pairs equal
    texts only, and keys the profile by the sentence prompt."""
    config = small_config(
        stages=["task", "self_audit", "judge"], models=[SUBJECT], guard="off",
        claim_units="sentences",
    )  # fmt: skip
    run, _ = make_run(tmp_path / "run", config)  # type: ignore[operator]
    summary = await run.run()
    assert summary.errors == 0
    rd = RunDirectory(tmp_path / "run")
    audits, judged = rd.records(SelfAuditRecord), rd.records(JudgeRecord)
    assert audits
    assert judged
    alignment = align_self_audit(tmp_path / "run", SUBJECT)
    assert alignment.prompt_version.startswith("bench_self_audit_sentences@")
    assert alignment.claims
    assert all(c.text == c.audit_text and c.similarity == 1.0 for c in alignment.claims)
    both = sum(
        len({c.text for c in j.claims} & {c.text for c in a.claims})
        for j in judged
        for a in audits
        if (j.persona_id, j.task) == (a.persona_id, a.task)
    )
    assert alignment.counts.aligned == both


def test_the_offline_models_answer_both_sentence_schemas() -> None:
    rule = offline_rule(SUBJECT)
    audit = sentence_self_audit_schema(2)
    prompt = "one numbered sentence per line:\n1. Hello there.\n2. You surely love tea."
    parsed = audit.model_validate_json(rule([Message(role="user", content=prompt)], audit))
    assert [item.n for item in parsed.sentences] == [1, 2]  # type: ignore[attr-defined]
    judge: type[BaseModel] = sentence_judge_schema(1, ["p-t1"])
    prompt = (
        "each with its turn id:\n[p-t1] I love tea.\nTHE ASSISTANT WAS ASKED: x\n<<<\n1. Tea.\n>>>"
    )
    judged = judge.model_validate_json(rule([Message(role="user", content=prompt)], judge))
    assert [item.n for item in judged.sentences] == [1]  # type: ignore[attr-defined]


async def test_the_report_says_a_sentence_run_is_not_the_papers_shape(
    tmp_path: Path, make_run: object
) -> None:
    from mirage_guard.benchmark._analysis import analyse
    from mirage_guard.benchmark._paper import shape_problems

    for units in ("free", "sentences"):
        config = small_config(
            stages=["task", "self_audit", "judge"], models=[SUBJECT], guard="off",
            claim_units=units,
        )  # fmt: skip
        run, _ = make_run(tmp_path / units, config)  # type: ignore[operator]
        await run.run()
        problems = shape_problems(analyse(tmp_path / units))
        assert any("--claim-units sentences" in p for p in problems) == (units == "sentences")
