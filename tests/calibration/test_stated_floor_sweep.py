"""`mirage calibrate stated-floor`: MIRAGE_STATED_MIN measured on one's own labelled claims.

The figures, the choice of a floor and the guards that share one set of models are checked with
a fast linker; the command itself, against `guard eval` run with the same floor, with the shipped
guard (real MiniLM, support model and profile) in the slow tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from mirage_guard.adapters.cli import app
from mirage_guard.calibration import (
    Example,
    FloorRow,
    LabelledClaim,
    choose_floor,
    collect_verdicts,
    decide_all,
    featurize,
    fit_profile,
    floor_row,
    load_examples,
    run_eval,
    run_stated_floor,
    save_verdicts,
)
from mirage_guard.calibration._stated_floor import check_floors, sweep
from mirage_guard.guard import (
    Candidate,
    Decision,
    Guard,
    Policy,
    Provenance,
    Role,
    SelfAuditor,
    Turn,
)
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.evidence import EvidenceLinker, shipped_linker
from mirage_guard.guard.scoring import ProfileMode, ProfileStore
from tests.calibration.factories import make_profile
from tests.calibration.test_fit_and_eval import _write_claims
from tests.calibration.test_per_claim_cli import _small_set
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.llm import labelling_llm

TURNS = (
    Turn(id="t1", role=Role.USER, content="I work nights at the children's hospital as a nurse."),
    Turn(id="t2", role=Role.ASSISTANT, content="That sounds demanding. Do you sleep well?"),
    Turn(id="t3", role=Role.USER, content="Not really. I moved to Porto last spring with my dog."),
)


@pytest.fixture(scope="module")
def make_guard() -> Callable[..., Guard]:
    """A fast guard: hashed words for vectors, a hand-set profile (tests/calibration/factories)."""
    linker = EvidenceLinker(HashingEmbedder())

    def build(**kwargs: Any) -> Guard:
        return Guard(linker=linker, evidence_profile=make_profile(), **kwargs)

    return build


def _example(claim_id: str, text: str, label: str, conv: str = "c1") -> Example:
    said = "t3" if "Porto" in text or "leep" in text else "t1"
    claim = LabelledClaim.model_validate(
        {"claim_id": claim_id, "text": text, "label": label, "conversation_id": conv}
        | ({"source_turn_id": said} if label != "generated" else {})
    )
    return Example(claim=claim, conversation_id=conv, turns=TURNS)


def _decided(example: Example, provenance: Provenance) -> Decision:
    # floor_row reads the provenance only
    return Decision.model_construct(candidate=example.candidate, provenance=provenance)


def _row(floor: float | None, stated: int, precision: float) -> FloorRow:
    return FloorRow(
        floor=floor,
        stated=stated,
        precision=precision,
        precision_ci=(0.0, 1.0),
        recall=0.5,
        generated_as_stated=0,
        inferred_as_stated=0,
        accuracy=0.5,
    )


def test_a_floor_row_counts_what_is_stored_as_stated_against_the_labels() -> None:
    examples = [
        _example("a", "Works as a nurse", "stated"),
        _example("b", "Moved to Porto", "stated"),
        _example("c", "Sleeps badly after night shifts", "inferred", conv="c2"),
        _example("d", "Has two cats", "generated", conv="c2"),
        _example("e", "Is a nurse in Lisbon", "generated", conv="c3"),
    ]
    made = [Provenance.STATED, Provenance.INFERRED, Provenance.STATED, Provenance.STATED]
    made.append(Provenance.GENERATED)
    decisions = {e.claim.claim_id: _decided(e, p) for e, p in zip(examples, made, strict=True)}
    row = floor_row(0.8, examples, decisions, n_boot=50)
    assert row.floor == 0.8
    assert row.stated == 3
    assert row.precision == pytest.approx(1 / 3)
    assert row.recall == pytest.approx(1 / 2)
    assert (row.generated_as_stated, row.inferred_as_stated) == (1, 1)
    assert row.accuracy == pytest.approx(2 / 5)
    lo, hi = row.precision_ci
    assert 0.0 <= lo <= row.precision <= hi <= 1.0


def test_a_perfect_precision_has_a_ci_at_one_however_few_are_stored() -> None:
    """Resamples that store nothing as stated used to count as precision 0: 2 of 2 right
    printed [0.000, 1.000]. Such a resample has no precision; the others all have 1.0."""
    examples = [
        _example("a", "Works as a nurse", "stated"),
        _example("b", "Has two cats", "generated", conv="c2"),
        _example("c", "Moved to Porto", "stated", conv="c3"),
        _example("d", "Sleeps badly", "inferred", conv="c4"),
        _example("e", "Is from Lisbon", "stated", conv="c5"),
    ]
    made = [Provenance.STATED, Provenance.GENERATED, Provenance.INFERRED]
    made += [Provenance.INFERRED, Provenance.STATED]
    decisions = {e.claim.claim_id: _decided(e, p) for e, p in zip(examples, made, strict=True)}
    row = floor_row(0.9, examples, decisions, n_boot=200)
    assert (row.stated, row.precision) == (2, 1.0)
    assert row.precision_ci == (1.0, 1.0)


def test_a_floor_row_with_nothing_stored_as_stated_has_zero_precision() -> None:
    examples = [_example("a", "Works as a nurse", "stated")]
    row = floor_row(0.9, examples, {"a": _decided(examples[0], Provenance.INFERRED)}, n_boot=20)
    assert (row.stated, row.precision, row.recall) == (0, 0.0, 0.0)


def test_the_lowest_floor_that_meets_the_target_is_chosen_whatever_the_rows_order() -> None:
    rows = [_row(0.9, 40, 0.95), _row(0.8, 50, 0.91), _row(None, 80, 0.7), _row(0.7, 60, 0.85)]
    assert choose_floor(rows, 0.9) == (0.8, True)
    assert choose_floor(rows, 0.95) == (0.9, True)
    assert choose_floor(rows, 0.99) == (None, False)
    # no floor needed: the profile's threshold alone meets the target
    assert choose_floor(rows, 0.6) == (None, True)
    # a floor under which nothing is stored is never the answer, whatever its precision
    assert choose_floor([_row(0.95, 0, 0.0), _row(None, 10, 0.5)], 0.0) == (None, True)
    assert choose_floor([_row(0.95, 0, 1.0)], 0.5) == (None, False)


def test_floors_are_measured_ascending_once_each_and_only_inside_zero_to_one() -> None:
    assert check_floors([0.9, 0.8, 0.9, 1.0]) == (0.8, 0.9, 1.0)
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(InputError, match=r"in \(0, 1\]"):
            check_floors([0.8, bad])


def test_a_set_with_no_claim_to_measure_is_refused_before_any_model_loads(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no labelled claims in split 'nope'"):
        run_stated_floor(data=None, split="nope")
    with pytest.raises(InputError, match=r"in \(0, 1\]"):
        run_stated_floor(data=None, split="dev", target_precision=1.5)


def test_a_guard_with_another_policy_shares_the_models_and_outlives_its_copy(
    make_guard: Callable[..., Guard],
) -> None:
    base = make_guard()
    copy = base.with_policy(Policy(stated_min=0.95))
    try:
        assert copy.linker is base.linker
        assert copy.profiles == base.profiles
        assert (base.policy.stated_min, copy.policy.stated_min) == (None, 0.95)
        copy.close()
        with pytest.raises(InputError, match="closed"):
            copy.tag(list(TURNS), [Candidate(text="Works as a nurse")])
        (d,) = base.tag(list(TURNS), [Candidate(text="Works as a nurse")])
        assert d.provenance is Provenance.STATED
    finally:
        base.close()


def test_a_sweep_starts_with_no_floor_and_a_floor_never_stores_more_facts(
    make_guard: Callable[..., Guard],
) -> None:
    examples = [
        _example("a", "Works nights at the children's hospital", "stated"),
        _example("b", "Works as a nurse", "stated"),
        _example("c", "Moved to Porto last spring with a dog", "stated"),
        _example("d", "Sleeps badly", "inferred"),
        _example("e", "Has two cats in Porto", "generated"),
    ]
    base = make_guard(policy=Policy(stated_min=0.99))  # the sweep sets its own floor on each row
    try:
        rows = anyio.run(lambda: sweep(base, examples, (0.5, 0.999999), n_boot=20))
        plain = base.with_policy(Policy())
        unset = anyio.run(lambda: decide_all(plain, examples))
        plain.close()
    finally:
        base.close()
    assert [r.floor for r in rows] == [None, 0.5, 0.999999]
    assert rows[0] == floor_row(None, examples, unset, n_boot=20)
    counts = [r.stated for r in rows]
    assert counts == sorted(counts, reverse=True)
    assert counts[0] > counts[-1]  # the highest floor held back a claim stated on its score


# ------------------------------------------------------------------ the shipped guard, slow
@pytest.mark.slow
def test_each_row_is_what_guard_eval_reports_with_that_floor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _small_set(tmp_path / "mine", conversations=3)
    monkeypatch.setenv("MIRAGE_STATED_MIN", "0.5")  # the sweep's rows set their own floor
    report = run_stated_floor(data=data, floors=(0.9, 1.0), n_boot=20, target_precision=0.5)
    assert [r.floor for r in report.rows] == [None, 0.9, 1.0]
    assert report.n == sum(report.labelled.values()) > 10
    assert report.profile_id == "evidence-only"
    for row in report.rows:
        if row.floor is None:
            monkeypatch.delenv("MIRAGE_STATED_MIN")
        else:
            monkeypatch.setenv("MIRAGE_STATED_MIN", str(row.floor))
        eval_report = run_eval(data=data, personas=None, split=None, n_boot=20)
        stated = eval_report.per_class["stated"]
        assert row.accuracy == pytest.approx(eval_report.provenance_accuracy)
        assert row.recall == pytest.approx(stated.recall)
        assert row.precision == pytest.approx(stated.precision)
    assert report.rows[0].stated > report.rows[-1].stated
    assert report.recommended in (None, 0.9, 1.0)


@pytest.mark.slow
def test_the_command_prints_the_rows_and_refuses_a_bad_floor_in_one_line(tmp_path: Path) -> None:
    data = _small_set(tmp_path / "mine", conversations=2)
    runner = CliRunner()
    base = ["calibrate", "stated-floor", "--data", str(data), "--n-boot", "20"]
    shown = runner.invoke(app, [*base, "--floor", "0.9", "--json"])
    assert shown.exit_code == 0, shown.output
    report = json.loads(shown.output)
    assert [r["floor"] for r in report["rows"]] == [None, 0.9]
    assert report["target_precision"] == 0.9
    table = runner.invoke(app, [*base, "--floor", "0.9", "--target-precision", "1.0"])
    assert table.exit_code == 0, table.output
    said = " ".join(table.output.split())
    assert "…" not in table.output  # every figure whole at 80 columns
    assert "stated floor on mine" in said
    assert "MIRAGE_STATED_MIN" in said or "no floor measured reaches" in said
    for bad in (["--floor", "1.5"], ["--target-precision", "0"]):
        refused = runner.invoke(app, [*base, *bad])
        assert refused.exit_code == 1
        assert refused.output.startswith("error:")
        assert "(0, 1]" in refused.output


@pytest.mark.slow
def test_with_verdicts_the_rows_are_guard_evals_under_the_writers_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--verdicts`: the writer's own labels decide with its fitted profile, as in `guard eval`."""
    claims = _write_claims(tmp_path / "claims.jsonl")
    examples = load_examples(claims)
    truth = {e.claim.claim_id: e.claim.label for e in examples}
    llm = labelling_llm(lambda cid: truth[cid], model="mock/honest", quoting="honest")
    auditor = SelfAuditor(llm)
    verdicts, failed = anyio.run(lambda: collect_verdicts(examples, auditor))
    assert not failed
    path = tmp_path / "verdicts.jsonl"
    save_verdicts(path, verdicts, writer_model=llm.model, prompt_version=auditor.prompt_version)
    linker = shipped_linker()
    profile = fit_profile(
        featurize(examples, linker, verdicts),
        mode=ProfileMode.SELF_AUDIT_SEPARATE,
        data_path=claims,
        split="all",
        embedder=linker.embedder.name,
        writer_model=llm.model,
        prompt_version=auditor.prompt_version,
        support_model=linker.support_sha256,
    )
    profiles = tmp_path / "profiles"
    ProfileStore(profiles).save(profile, profiles)
    report = run_stated_floor(
        data=claims, profile_dir=profiles, verdicts=path, floors=(0.9,), n_boot=20
    )
    assert report.profile_id == profile.profile_id
    for row in report.rows:
        if row.floor is None:
            monkeypatch.delenv("MIRAGE_STATED_MIN", raising=False)
        else:
            monkeypatch.setenv("MIRAGE_STATED_MIN", str(row.floor))
        evaluated = run_eval(
            data=claims, personas=None, split=None, profile_dir=profiles, verdicts=path, n_boot=20
        )
        assert evaluated.profile_id == profile.profile_id
        assert row.accuracy == pytest.approx(evaluated.provenance_accuracy)
        assert row.precision == pytest.approx(evaluated.per_class["stated"].precision)
