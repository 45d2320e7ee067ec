"""A fitted profile keeps the P(over-inference) it gave its own fitting data (binned), so the
sidecar and the report can tell when live scores drift away from it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mirage_guard.calibration._data import load_examples
from mirage_guard.calibration._jobs import featurize, fit_profile, oi_scores
from mirage_guard.guard.evidence import EvidenceLinker
from mirage_guard.guard.scoring import CalibrationProfile, ProfileMode, ProfileStore, psi
from tests.calibration.test_fit_and_eval import claims_file, linker

__all__ = ["claims_file", "linker"]  # fixtures shared with test_fit_and_eval.py


def test_fit_stores_the_binned_scores_of_its_training_data(
    claims_file: Path, linker: EvidenceLinker, tmp_path: Path
) -> None:
    table = featurize(load_examples(claims_file, split="train"), linker)
    profile = fit_profile(
        table,
        mode=ProfileMode.EVIDENCE,
        data_path=claims_file,
        split="train",
        embedder=linker.embedder.name,
    )
    dist = profile.score_distribution
    assert dist is not None
    assert dist.split == "train"
    assert dist.n == len(table.rows) == profile.fitted_on.n_examples
    expected, _ = np.histogram(oi_scores(profile, table), bins=np.asarray(dist.edges))
    assert list(dist.counts) == expected.tolist()
    assert psi(dist.counts, expected) == 0.0  # the fit data does not drift from itself

    # it survives the file round trip, and the content hash changes with it
    path = ProfileStore(tmp_path).save(profile)
    loaded = CalibrationProfile.model_validate_json(path.read_text())
    assert loaded.score_distribution == dist
    assert loaded.content_hash == profile.content_hash
    without = profile.model_copy(update={"score_distribution": None})
    assert without.content_hash != profile.content_hash
