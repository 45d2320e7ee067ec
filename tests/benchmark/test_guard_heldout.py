"""The guard arm is measured only on personas its profile was not fitted on; the manifest pins
the persona file and the profiles by content hash; the guard cache key includes profile content."""

from __future__ import annotations

import hashlib
from pathlib import Path

from mirage_guard.benchmark._cache import DiskCache
from mirage_guard.benchmark._guard_arm import CachedTagger, profile_refs, training_personas
from mirage_guard.benchmark._records import AccumRoundRecord, GuardTagRecord, JudgeRecord
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark.personas import Persona, personas_file_sha256
from mirage_guard.guard import Guard
from mirage_guard.guard.evidence import EvidenceLinker
from mirage_guard.guard.scoring import CalibrationProfile, DataRef
from tests.benchmark.small_run import FAST, PERSONAS_FILE, small_config
from tests.calibration.factories import make_profile
from tests.fakes.bench import CallLog, recording_provider
from tests.fakes.embedder import HashingEmbedder

FIT_ON_TRAIN = DataRef(
    path="benchmark/data/claims.jsonl", sha256="0" * 64, n_examples=1334, split="train"
)


def _profile(**update: object) -> CalibrationProfile:
    return make_profile().model_copy(update={"fitted_on": FIT_ON_TRAIN, **update})


def _guard(profile: CalibrationProfile) -> Guard:
    return Guard(linker=EvidenceLinker(HashingEmbedder()), evidence_profile=profile)


def test_training_personas_are_the_fit_split_of_the_packaged_claims() -> None:
    train, known, _ = training_personas(FIT_ON_TRAIN.model_dump())
    dev, _, _ = training_personas({**FIT_ON_TRAIN.model_dump(), "split": "dev"})
    assert known
    assert len(train) == 120
    assert len(dev) == 30
    assert not train & dev
    assert "st-001" in train
    assert "st-003" in dev  # the split is by persona number (merge.py: ... % 5 == 3 is dev)
    unknown = training_personas({"path": "hand-set", "split": "none"})
    assert unknown == (set(), False, False)


def test_profile_refs_hash_the_profile_content() -> None:
    profile = _profile()
    (ref,) = profile_refs(_guard(profile))
    assert ref.role == "evidence_profile"
    assert ref.sha256 == hashlib.sha256(profile.model_dump_json().encode()).hexdigest()
    assert ref.training_data_known
    assert "ct-001" in ref.training_personas


def test_guard_cache_key_changes_with_profile_content_under_the_same_id(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path)
    a = CachedTagger(_guard(_profile()), cache)
    b = CachedTagger(_guard(_profile(oi_threshold=0.9)), cache)
    same = CachedTagger(_guard(_profile()), cache)
    assert a.inner.describe() == b.inner.describe()  # same id: describe() alone cannot tell
    assert a.configuration != b.configuration
    assert a.configuration == same.configuration


async def test_guard_arm_runs_on_held_out_personas_only(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    # st-001 and ct-001 are training personas; the third becomes a dev persona (nt-003)
    people = [
        small_personas[0],
        small_personas[1],
        small_personas[2].model_copy(update={"persona_id": "nt-003"}),
    ]
    config = small_config(stages=["task", "judge", "accum"], accum_personas=1)
    run = BenchmarkRun(
        config,
        tmp_path / "run",
        provider=recording_provider(CallLog()),
        options=FAST,
        guard_factory=lambda: _guard(_profile()),
        personas=people,
    )
    await run.run()
    rd = RunDirectory(tmp_path / "run")
    assert {r.persona_id for r in rd.records(GuardTagRecord)} == {"nt-003"}
    # both Accum arms on the held-out persona, so with and without compare the same persona
    rounds = rd.records(AccumRoundRecord)
    assert {r.persona_id for r in rounds} == {"nt-003"}
    assert {r.guarded for r in rounds} == {False, True}
    # the guard-off task judging still covers every persona
    judged = {r.persona_id for r in rd.records(JudgeRecord) if r.task is not None}
    assert judged == {"st-001", "ct-001", "nt-003"}
    manifest = rd.read_manifest()
    assert manifest.guard_excluded_personas == ["ct-001", "st-001"]
    (ref,) = manifest.guard_profiles
    assert ref.sha256 == hashlib.sha256(_profile().model_dump_json().encode()).hexdigest()
    assert not ref.data_sha256_matches  # this test profile names a file it was not fitted on
    assert manifest.personas_sha256
    assert manifest.personas_file_sha256 is None  # personas given in memory, no file


def test_persona_file_hash_is_of_the_file_bytes() -> None:
    expected = hashlib.sha256(PERSONAS_FILE.read_bytes()).hexdigest()
    assert personas_file_sha256(PERSONAS_FILE) == expected
    assert personas_file_sha256(None) is not None  # the packaged file


def test_progress_totals_leave_training_personas_out_of_the_guard_arm() -> None:
    from mirage_guard.benchmark._config import Stage
    from mirage_guard.benchmark._runner import unit_count

    config = small_config(stages=["task", "judge", "accum"], accum_personas=2)  # guard both
    full = unit_count(config, 3)
    held_out = unit_count(config, 3, guard_excluded=2)  # one held-out persona left
    assert full[Stage.TASK] == held_out[Stage.TASK]  # the guard-off arm covers everyone
    # 2 models x 1 persona (not 2) x 2 policies x 2 arms x 8 rounds
    assert held_out[Stage.ACCUM] == 2 * 1 * 2 * 2 * 8
    # guard tagging: 2 models x 2 personas x 2 tasks; memory judging: one Accum persona fewer
    assert full[Stage.JUDGE] - held_out[Stage.JUDGE] == 2 * 2 * 2 + 2 * 1 * 2 * 2
