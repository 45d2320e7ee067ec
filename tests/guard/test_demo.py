"""`make demo`: the paper's example through GuardedMemory on a real embedded Mem0 + MiniLM."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from mirage_guard.adapters._demo import CANDIDATES, run_example

pytestmark = pytest.mark.slow


def test_demo_tags_all_three_provenances_with_the_right_user_turns(tmp_path: Path) -> None:
    result = anyio.run(run_example, tmp_path / "data")
    by_text = {d["text"]: d for d in result.write["decisions"]}
    assert set(by_text) == set(CANDIDATES)
    expected_stated = {
        "Works as a software engineer at a Seattle startup": "t1",
        "Enjoys rock climbing": "t3",
        "Has a cat named Pixel": "t4",
    }
    for text, turn in expected_stated.items():
        assert (by_text[text]["provenance"], by_text[text]["source_turn_id"]) == ("stated", turn)
    inferred = by_text["Probably owns climbing shoes and a harness"]
    assert (inferred["provenance"], inferred["source_turn_id"]) == ("inferred", "t3")
    for text in ("Is looking for an adventure partner", "Has two younger sisters"):
        assert by_text[text]["provenance"] == "generated"
        assert by_text[text]["source_turn_id"] is None
    # assistant turns (t2, t5) are never evidence
    assert not {d["source_turn_id"] for d in result.write["decisions"]} & {"t2", "t5"}
    # reads: facts only by default, hypotheses on request, quarantined kept out of both
    assert {i["memory"] for i in result.facts} == set(expected_stated)
    assert {i["status"] for i in result.facts} == {"fact"}
    hypotheses = {i["memory"] for i in result.with_hypotheses} - set(expected_stated)
    assert hypotheses == {"Probably owns climbing shoes and a harness"}
    generated = {t for t, d in by_text.items() if d["provenance"] == "generated"}
    quarantined = {i["memory"] for i in result.everything if i["status"] == "quarantined"}
    assert quarantined == generated
    for item in result.everything:
        assert item["provenance"] in {"stated", "inferred", "generated"}
