"""MIRAGE_SUPPORT_PRECISION: the claim-support cross-encoder at inference in fp32 (default, as
measured) or under CPU bf16 autocast (opt-in, faster where the CPU has bf16 units)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from mirage_guard.guard import Guard, GuardSettings
from mirage_guard.guard.evidence import (
    CrossSupportModel,
    resolve_precision,
    shared_cross_model,
    shared_minilm,
)

pytestmark = pytest.mark.slow

PAIRS = Path(__file__).parents[2] / "benchmark" / "data" / "support_pairs" / "part_a.jsonl"


def _pairs(n: int) -> tuple[list[str], list[str]]:
    rows = [json.loads(line) for line in PAIRS.read_text("utf-8").splitlines()[:n]]
    return [r["premise"] for r in rows], [r["claim"] for r in rows]


def test_one_shared_model_per_precision() -> None:
    fp32, bf16 = shared_cross_model("fp32"), shared_cross_model("bf16")
    assert (fp32.precision, bf16.precision) == ("fp32", "bf16")
    assert fp32 is not bf16
    assert shared_cross_model() is fp32
    assert shared_cross_model("auto") is shared_cross_model(resolve_precision("auto"))
    assert fp32.sha256 == bf16.sha256  # the same verified weights


def test_bf16_reads_pairs_almost_as_fp32_does() -> None:
    """Measured: the top class of about 0.5 % of pairs changes; probabilities move a little."""
    premises, claims = _pairs(300)
    fp32 = shared_cross_model("fp32").predict_text(premises, claims)
    bf16 = shared_cross_model("bf16").predict_text(premises, claims)
    assert bf16.dtype == np.float32
    assert np.allclose(bf16.sum(axis=1), 1.0, atol=1e-4)
    assert float(np.mean(fp32.argmax(1) == bf16.argmax(1))) >= 0.97
    assert float(np.abs(fp32 - bf16).mean()) < 0.02
    assert not np.array_equal(fp32, bf16)  # bf16 did run


def _precision_of(settings: GuardSettings) -> str:
    guard = Guard.from_settings(settings, embedder=shared_minilm())
    try:
        model = guard.linker.support.model
        assert isinstance(model, CrossSupportModel)
        return model.precision
    finally:
        guard.close()


def test_the_setting_reaches_the_guards_support_model(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError):
        GuardSettings(support_precision="fp16")
    monkeypatch.delenv("MIRAGE_SUPPORT_PRECISION", raising=False)
    assert _precision_of(GuardSettings()) == "fp32"
    monkeypatch.setenv("MIRAGE_SUPPORT_PRECISION", "bf16")
    assert _precision_of(GuardSettings()) == "bf16"


def test_perf_evidence_prints_the_precision_it_ran_with(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from mirage_guard.adapters.cli import app

    monkeypatch.setenv("MIRAGE_SUPPORT_PRECISION", "bf16")
    result = CliRunner().invoke(app, ["perf", "evidence", "--n", "20", "--runs", "1"])
    assert result.exit_code == 0, result.output
    assert re.search(r"claim-support precision.*│\s*bf16\s*│", " ".join(result.output.split()))
    assert re.search(r"ratio guard / encoder\s*│\s*\d\.\d{3}", result.output)
    sha = shared_cross_model().sha256[:12]
    assert re.search(rf"claim-support model sha256.*│\s*{sha}\s*│", " ".join(result.output.split()))
