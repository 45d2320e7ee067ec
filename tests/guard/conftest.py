"""Fixtures of the guard tests: a fast linker and hand-set profiles (data: tests/guard/paper.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mirage_guard.guard import Guard
from mirage_guard.guard.evidence import EvidenceLinker
from mirage_guard.guard.scoring import CalibrationProfile
from tests.calibration.factories import make_profile
from tests.fakes.embedder import HashingEmbedder


@pytest.fixture(scope="module")
def linker() -> EvidenceLinker:
    return EvidenceLinker(HashingEmbedder())


@pytest.fixture
def evidence_profile() -> CalibrationProfile:
    return make_profile()


@pytest.fixture
def make_guard(
    linker: EvidenceLinker, evidence_profile: CalibrationProfile
) -> Callable[..., Guard]:
    def build(**kwargs: Any) -> Guard:
        return Guard(linker=linker, evidence_profile=evidence_profile, **kwargs)

    return build
