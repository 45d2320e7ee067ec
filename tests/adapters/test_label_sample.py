"""``mirage report label-sample``: logged decisions drawn as claims to label, with the
conversation as it was when each was decided; labelled, the file is what ``guard eval`` reads."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirage_guard.adapters._decision_log import DecisionLog, MemoryScope, WrittenDecision
from mirage_guard.adapters._label_sample import draw_label_sample, write_label_sample
from mirage_guard.adapters.cli import app
from mirage_guard.calibration import load_examples
from mirage_guard.guard import (
    Candidate,
    Provenance,
    Reason,
    ReasonCode,
    Role,
    Turn,
)
from mirage_guard.guard.errors import InputError
from tests.fakes.decisions import logged_decision

ALICE = MemoryScope(user_id="alice")
FIRST = [
    Turn(id="t1", role=Role.USER, content="I went climbing last weekend."),
    Turn(id="t2", role=Role.ASSISTANT, content="Sounds fun! Where?"),
    Turn(id="t3", role=Role.USER, content="At the gym near my flat in Leeds."),
]
LATER = [*FIRST, Turn(id="t4", role=Role.USER, content="Actually I moved to York last month.")]


def _decision(
    text: str, provenance: Provenance, turn: str | None, code: ReasonCode = ReasonCode.NOTE
) -> WrittenDecision:
    params = {"text": "logged"} if code is ReasonCode.NOTE else {}
    decision = logged_decision(text, provenance, turn, reasons=[Reason(code=code, params=params)])
    return WrittenDecision(decision=decision, memory_id=None)


@pytest.fixture
def log(tmp_path: Path) -> DecisionLog:
    log = DecisionLog(f"sqlite:///{tmp_path / 'decisions.db'}")
    log.record(
        tenant="acme",
        scope=ALICE,
        turns=FIRST,
        written=[
            _decision("Enjoys climbing", Provenance.STATED, "t1"),
            _decision("Lives in Leeds", Provenance.INFERRED, "t3"),
            _decision("Has two younger sisters", Provenance.GENERATED, None),
        ],
        request_id="r1",
        writer_model="openai/gpt-4o-mini",
    )
    log.record(
        tenant="acme",
        scope=ALICE,
        turns=LATER,
        written=[
            _decision("Lives in York", Provenance.STATED, "t4"),
            # a user's own message stored verbatim (add(infer=False)): no claim the guard judged
            _decision(LATER[3].content, Provenance.STATED, "t4", ReasonCode.VERBATIM_USER_MESSAGE),
        ],
        request_id="r2",
        writer_model="anthropic/claude-sonnet",
    )
    log.record(
        tenant="other",
        scope=MemoryScope(user_id="bob"),
        turns=[Turn(id="t1", role=Role.USER, content="I keep bees.")],
        written=[_decision("Keeps bees", Provenance.STATED, "t1")],
        request_id="r3",
        writer_model="openai/gpt-4o-mini",
    )
    yield log
    log.close()


def _by_text(rows: list[dict[str, object]]) -> dict[object, dict[str, object]]:
    return {r["text"]: r for r in rows}


def test_a_claim_comes_with_the_conversation_as_it_was_when_it_was_decided(
    log: DecisionLog,
) -> None:
    sample = draw_label_sample(log, n=100)
    rows = _by_text(sample.rows)
    assert set(rows) == {
        "Enjoys climbing",
        "Lives in Leeds",
        "Has two younger sisters",
        "Lives in York",
        "Keeps bees",
    }
    assert (sample.considered, sample.verbatim, sample.without_turns) == (6, 1, 0)
    turn_ids = lambda text: [t["id"] for t in rows[text]["turns"]]  # type: ignore[attr-defined]  # noqa: E731
    # the first write's claims were decided before "Actually I moved to York" was said
    assert turn_ids("Lives in Leeds") == ["t1", "t2", "t3"]
    assert turn_ids("Lives in York") == ["t1", "t2", "t3", "t4"]
    assert turn_ids("Keeps bees") == ["t1"]  # its own tenant's and user's conversation
    leeds = rows["Lives in Leeds"]
    assert leeds["turns"][1] == {"id": "t2", "role": "assistant", "content": FIRST[1].content}  # type: ignore[index]
    # blind: nothing of the guard's decision, an empty label to fill
    assert (leeds["label"], leeds["source_turn_id"]) == (None, None)
    assert "guard" not in leeds
    assert (leeds["tenant"], leeds["user_id"], leeds["writer_model"]) == (
        "acme",
        "alice",
        "openai/gpt-4o-mini",
    )


def test_show_guard_adds_the_decision_for_a_review(log: DecisionLog) -> None:
    rows = _by_text(draw_label_sample(log, n=100, show_guard=True).rows)
    guard = rows["Lives in Leeds"]["guard"]
    assert guard == {
        "provenance": "inferred",
        "action": "store_as_hypothesis",
        "source_turn_id": "t3",
        "score": 0.3,
        "threshold": 0.5,
        "profile_id": "evidence-only",
        "reasons": ["logged"],
    }
    assert rows["Lives in Leeds"]["source_turn_id"] is None  # the label's fields stay empty


def test_the_draw_is_seeded_uniform_and_filtered(log: DecisionLog) -> None:
    first = [r["claim_id"] for r in draw_label_sample(log, n=2, seed=3).rows]
    assert len(first) == 2
    assert [r["claim_id"] for r in draw_label_sample(log, n=2, seed=3).rows] == first
    draws = {
        tuple(r["claim_id"] for r in draw_label_sample(log, n=2, seed=s).rows) for s in range(12)
    }
    assert len(draws) > 1  # another seed, another sample
    assert {r["text"] for r in draw_label_sample(log, n=9, tenant="other").rows} == {"Keeps bees"}
    models = draw_label_sample(log, n=9, writer_model="anthropic/claude-sonnet")
    assert [r["text"] for r in models.rows] == ["Lives in York"]
    future = datetime.now(UTC) + timedelta(minutes=5)
    empty = draw_label_sample(log, n=9, since=future)
    assert (empty.rows, empty.considered) == ([], 0)
    with pytest.raises(InputError, match="at least 1"):
        draw_label_sample(log, n=0)


def test_labelled_it_is_what_guard_eval_reads_and_unlabelled_it_is_refused(
    log: DecisionLog, tmp_path: Path
) -> None:
    sample = draw_label_sample(log, n=100)
    out = tmp_path / "sample" / "to_label.jsonl"
    write_label_sample(sample, out)
    with pytest.raises(InputError, match=r"to_label\.jsonl:1: label: Input should be 'GROUNDED'"):
        load_examples(out)
    truth = {
        "Enjoys climbing": ("GROUNDED", "t1"),
        "Lives in Leeds": ("INFERRED_REASONABLE", "t3"),
        "Has two younger sisters": ("FABRICATED", None),
        "Lives in York": ("stated", "t4"),
        "Keeps bees": ("GROUNDED", "t1"),
    }
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["label"], row["source_turn_id"] = truth[row["text"]]
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    examples = load_examples(out)
    assert [e.claim.text for e in examples] == [r["text"] for r in rows]
    york = next(e for e in examples if e.claim.text == "Lives in York")
    assert [t.id for t in york.turns] == ["t1", "t2", "t3", "t4"]
    leeds = next(e for e in examples if e.claim.text == "Lives in Leeds")
    assert york.conversation_id != leeds.conversation_id  # two moments of one conversation


def test_the_cli_writes_the_sample_and_refuses_what_it_cannot_read(
    log: DecisionLog, tmp_path: Path
) -> None:
    url = str(log.engine.url)
    out = tmp_path / "to_label.jsonl"
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["report", "label-sample", "--database-url", url, "--out", str(out), "--n", "3"],
    )
    assert result.exit_code == 0, result.output
    assert "wrote 3 of 6 decisions" in result.output
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3
    out.write_text('{"claim_id": "log-1", "label": "GROUNDED"}\n', encoding="utf-8")  # labelled
    kept = runner.invoke(
        app, ["report", "label-sample", "--database-url", url, "--out", str(out), "--n", "50"]
    )
    assert kept.exit_code == 2
    assert "exists (labels in it would be lost)" in kept.output
    assert "GROUNDED" in out.read_text(encoding="utf-8")  # nothing lost
    everything = runner.invoke(
        app,
        [
            *("report", "label-sample", "--database-url", url),
            *("--out", str(out), "--n", "50", "--overwrite"),
        ],
    )
    assert "wrote 5 of 6 decisions" in everything.output
    assert "left out: 1 user messages stored verbatim" in everything.output
    missing = runner.invoke(
        app,
        ["report", "label-sample", "--database-url", f"sqlite:///{tmp_path / 'nope.db'}"],
    )
    assert missing.exit_code == 2
    assert "no decision log at" in missing.output
    assert not (tmp_path / "nope.db").exists()  # reading never creates an empty log
    none = runner.invoke(
        app,
        [
            *("report", "label-sample", "--database-url", url),
            *("--out", str(tmp_path / "x.jsonl"), "--since", "2999-01-01"),
        ],
    )
    assert none.exit_code == 2
    assert "no decision to sample" in none.output
    assert not (tmp_path / "x.jsonl").exists()
    bad = runner.invoke(
        app, ["report", "label-sample", "--database-url", url, "--since", "yesterday-ish"]
    )
    assert bad.exit_code == 2
    assert "is not an ISO date/time" in bad.output


@pytest.mark.slow
def test_the_shipped_guard_decides_a_drawn_claim_again_as_it_was_logged(tmp_path: Path) -> None:
    """The loop a deployment runs: the guard decides a write and the log keeps it; the sample
    gives the claim with its conversation; labelled, `guard eval` decides it again with the
    same guard, from the same turns, and comes to the same decision."""
    from mirage_guard.guard import Guard, GuardSettings
    from mirage_guard.guard.evidence import shared_minilm

    turns = [
        Turn(id="t1", role=Role.USER, content="I'm a software engineer at a startup in Seattle."),
        Turn(id="t2", role=Role.ASSISTANT, content="Nice! What do you do outside work?"),
        Turn(id="t3", role=Role.USER, content="I went rock climbing last weekend."),
        Turn(id="t4", role=Role.USER, content="My cat Pixel knocked over my coffee."),
    ]
    truth = {
        "Works as a software engineer at a Seattle startup": ("GROUNDED", "t1"),
        "Enjoys rock climbing": ("GROUNDED", "t3"),
        "Has a cat named Pixel": ("GROUNDED", "t4"),
        "Probably owns climbing shoes and a harness": ("INFERRED_REASONABLE", "t3"),
        "Has two younger sisters": ("FABRICATED", None),
        "Is an introvert who prefers coding to parties": ("INFERRED_STEREOTYPE", None),
    }
    guard = Guard.from_settings(GuardSettings(), embedder=shared_minilm())
    try:
        decisions = guard.tag(turns, [Candidate(text=t) for t in truth])
    finally:
        guard.close()
    url = f"sqlite:///{tmp_path / 'decisions.db'}"
    log = DecisionLog(url)
    log.record(
        tenant="default",
        scope=ALICE,
        turns=turns,
        written=[WrittenDecision(decision=d) for d in decisions],
        request_id="r1",
        writer_model=None,
    )
    log.close()
    out = tmp_path / "to_label.jsonl"
    runner = CliRunner()
    drawn = runner.invoke(
        app,
        ["report", "label-sample", "--database-url", url, "--out", str(out), "--show-guard"],
    )
    assert drawn.exit_code == 0, drawn.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {r["text"] for r in rows} == set(truth)
    for row in rows:
        row["label"], row["source_turn_id"] = truth[row["text"]]
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    decided = tmp_path / "rows.jsonl"
    report = runner.invoke(
        app, ["guard", "eval", "--data", str(out), "--json", "--per-claim", str(decided)]
    )
    assert report.exit_code == 0, report.output
    assert json.loads(report.output)["n"] == len(truth)
    again = {
        r["text"]: r for r in map(json.loads, decided.read_text(encoding="utf-8").splitlines())
    }
    logged = {r["text"]: r["guard"] for r in rows}
    for text, row in again.items():
        assert (row["provenance"], row["source_turn_id"]) == (
            logged[text]["provenance"],
            logged[text]["source_turn_id"],
        ), text
