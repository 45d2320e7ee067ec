"""A resume is refused when the data the records depend on changed since the run started: the
personas (their revealed facts are the evidence judged) or the guard arm's configuration (its
policy, audit mode, profiles). Both were accepted: the old records were kept, new units were
made with the new setup, and the manifest then named only the new one (found by a release
engineer editing a personas file, and changing MIRAGE_GENERATED_ACTION, between two runs)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from mirage_guard.benchmark._matching import SemanticMatcher
from mirage_guard.benchmark._records import GuardTagRecord
from mirage_guard.benchmark._report import write_report
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark.personas import Persona
from mirage_guard.guard import Action, AuditMode, Guard, Label, Policy, SelfAuditor
from mirage_guard.guard.errors import ConfigError
from mirage_guard.guard.evidence import EvidenceLinker
from tests.benchmark.small_run import FAST, PERSONAS_FILE, small_config
from tests.calibration.factories import make_profile
from tests.fakes.bench import CallLog, recording_provider
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.llm import labelling_llm


def _guard(policy: Policy | None = None) -> Guard:
    return Guard(
        linker=EvidenceLinker(HashingEmbedder()),
        evidence_profile=make_profile(),
        policy=policy or Policy(),
    )


def _audited_by(auditor_model: str) -> Guard:
    """A guard whose candidates an independent auditor labels (no profile for it: uncalibrated)."""
    return Guard(
        linker=EvidenceLinker(HashingEmbedder()),
        evidence_profile=make_profile(),
        auditor=SelfAuditor(labelling_llm(Label.GROUNDED, model=auditor_model)),
        audit_mode=AuditMode.SEPARATE,
        auditor_model=auditor_model,
    )


def _run(
    run_dir: Path,
    *,
    personas: list[Persona] | None = None,
    policy: Policy | None = None,
    make_guard: Callable[[], Guard] | None = None,
    **config: object,
) -> BenchmarkRun:
    return BenchmarkRun(
        small_config(**config),
        run_dir,
        provider=recording_provider(CallLog()),
        options=FAST,
        guard_factory=make_guard or (lambda: _guard(policy)),
        personas=personas,
    )


async def test_a_changed_persona_is_refused(tmp_path: Path, small_personas: list[Persona]) -> None:
    await _run(tmp_path / "run", personas=small_personas, stages=["task", "judge"]).run()
    before = (tmp_path / "run" / "manifest.json").read_text()
    first = small_personas[0]
    fact = first.revealed_facts[0].model_copy(update={"text": "I spent Saturday sailing."})
    edited = [first.model_copy(update={"revealed_facts": (fact, *first.revealed_facts[1:])}),
              *small_personas[1:]]  # fmt: skip
    with pytest.raises(ConfigError, match=r"changed since it started: the personas\)"):
        await _run(tmp_path / "run", personas=edited, stages=["task", "judge"]).run()
    assert (tmp_path / "run" / "manifest.json").read_text() == before  # it still names the old


async def test_a_changed_personas_file_is_refused(tmp_path: Path) -> None:
    lines = PERSONAS_FILE.read_text().splitlines()[:6]
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(lines) + "\n")
    config = {"personas_file": str(path), "stages": ["task"], "guard": "off"}
    await _run(tmp_path / "run", **config).run()
    row = json.loads(lines[0])
    row["revealed_facts"][0]["text"] = "I spent Saturday sailing on the Tagus."
    path.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    with pytest.raises(
        ConfigError, match=r"changed since it started: the personas; the personas file\)"
    ):
        await _run(tmp_path / "run", **config).run()


async def test_another_guard_policy_is_refused(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    stages = ["task", "judge"]
    await _run(tmp_path / "run", personas=small_personas, stages=stages).run()
    strict = Policy(generated_action=Action.BLOCK)
    with pytest.raises(ConfigError, match="the guard's configuration"):
        await _run(tmp_path / "run", personas=small_personas, stages=stages, policy=strict).run()
    manifest = RunDirectory(tmp_path / "run").read_manifest()
    assert manifest.guard_configuration["describe"]["policy"] == Policy().model_dump(mode="json")
    # the same setup resumes
    await _run(tmp_path / "run", personas=small_personas, stages=stages).run()
    assert RunDirectory(tmp_path / "run").records(GuardTagRecord)


async def test_another_independent_auditor_is_refused(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    """MIRAGE_AUDITOR_MODEL changed between two runs into one directory: the guard records of
    one auditor would be mixed with the other's."""
    stages = ["task", "judge"]
    first = lambda: _audited_by("mock/auditor-a")  # noqa: E731
    await _run(tmp_path / "run", personas=small_personas, stages=stages, make_guard=first).run()
    manifest = RunDirectory(tmp_path / "run").read_manifest()
    assert manifest.guard_configuration["describe"]["auditor_model"] == "mock/auditor-a"
    write_report(tmp_path / "run", matcher=SemanticMatcher(HashingEmbedder()))
    md = (tmp_path / "run" / "report" / "report.md").read_text()
    assert (  # the report says how the guard arm decided, not only which profiles it read
        "guard: audit separate, labelled by the independent auditor mock/auditor-a (no call of "
        "it is in this run's records: decisions cached or recorded before audit calls were "
        "counted, or a guard the benchmark did not build); "
        "inferred → store_as_hypothesis, generated → quarantine."
    ) in md
    other = lambda: _audited_by("mock/auditor-b")  # noqa: E731
    # the error names what changed, not only that the configuration did
    with pytest.raises(ConfigError, match="auditor_model: 'mock/auditor-a' -> 'mock/auditor-b'"):
        await _run(tmp_path / "run", personas=small_personas, stages=stages, make_guard=other).run()
    await _run(tmp_path / "run", personas=small_personas, stages=stages, make_guard=first).run()


async def test_a_manifest_written_before_the_check_still_resumes(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    await _run(tmp_path / "run", personas=small_personas, stages=["task", "judge"]).run()
    path = tmp_path / "run" / "manifest.json"
    old = json.loads(path.read_text())
    del old["guard_configuration"]
    path.write_text(json.dumps(old))
    await _run(tmp_path / "run", personas=small_personas, stages=["task", "judge"]).run()
    assert RunDirectory(tmp_path / "run").read_manifest().guard_configuration is not None


@pytest.mark.parametrize(
    ("configuration", "said"),
    [
        (None, "guard: not recorded"),
        ("FakeTagger", "guard: FakeTagger"),
        (
            {"describe": {"audit_mode": "off", "policy": {"inferred_action": "quarantine",
                                                          "generated_action": "block"}}},
            "guard: no self-audit (evidence only); inferred → quarantine, generated → block",
        ),
        (
            {"describe": {"audit_mode": "separate", "writer_model": "m/w", "auditor_model": None,
                          "policy": {"inferred_action": "store_as_hypothesis",
                                     "generated_action": "quarantine", "stated_min": 0.8}}},
            "guard: audit separate, labelled by the configured writer model m/w (its profile "
            "scores its own claims only; its calls are the Cost table's \"guard arm's audit\" "
            "row); "
            "inferred → store_as_hypothesis, generated → quarantine, stated floor 0.8",
        ),
    ],
)  # fmt: skip
def test_the_guard_setup_as_the_report_says_it(configuration: object, said: str) -> None:
    from mirage_guard.benchmark._report_fidelity import guard_setup

    assert guard_setup(configuration) == said
