"""Fixtures of the guard tests: a fast linker and hand-set profiles (data: tests/guard/paper.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from mirage_guard.guard import Guard, GuardSettings, Role, Turn
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


@pytest.fixture(scope="module")
def shipped_guard() -> Iterator[Guard]:
    """The guard as shipped (real MiniLM, the shipped support model and profile), once per
    module: the probe suites tag with it."""
    from mirage_guard.guard.evidence import shared_minilm

    g = Guard.from_settings(GuardSettings(), embedder=shared_minilm())
    try:
        yield g
    finally:
        g.close()


def chat_turns(chat: Sequence[Sequence[str]]) -> list[Turn]:
    """A probe chat's (role, text) pairs as turns t1, t2, ...: "u" the user, "a" the other side."""
    roles = {"u": Role.USER, "a": Role.ASSISTANT}
    return [Turn(id=f"t{i}", role=roles[r], content=c) for i, (r, c) in enumerate(chat, 1)]
