"""The shipped evidence-only profile still meets issue 2's bar on the held-out dev split."""

from __future__ import annotations

import pytest

from mirage_guard.calibration._evaluate import run_eval

pytestmark = pytest.mark.slow


def test_dev_split_auroc_and_linking_hold_up() -> None:
    report = run_eval(data=None, personas=None, split="dev", n_boot=50)
    assert report.n == 337
    assert report.auroc >= 0.85
    assert report.source_turn_accuracy_when_linked >= 0.9
    assert report.per_class["stated"].precision >= 0.75
    assert report.calibrated_share == 1.0
