"""The paper's example conversation, its candidates, two writers and an audit-profile factory:
what the guard tests share (imported from here, never from conftest)."""

from __future__ import annotations

from pathlib import Path

from mirage_guard.guard import Candidate, Role, Turn
from mirage_guard.guard.scoring import CalibrationProfile, ProfileMode, ProfileStore
from mirage_guard.prompts import load_prompt
from tests.calibration.factories import make_profile

WRITER_A = "mock/writer-a"
WRITER_B = "mock/writer-b"
SELF_AUDIT_REF = load_prompt("self_audit").ref

# The paper's example conversation; assistant turns repeat user facts on purpose.
PAPER_TURNS: tuple[Turn, ...] = (
    Turn(id="u1", role=Role.USER, content="I'm a software engineer at a startup in Seattle."),
    Turn(
        id="a1",
        role=Role.ASSISTANT,
        content="Great, a software engineer at a startup in Seattle! What do you do for fun?",
    ),
    Turn(id="u2", role=Role.USER, content="I went rock climbing last weekend."),
    Turn(id="a2", role=Role.ASSISTANT, content="Rock climbing last weekend sounds fun."),
    Turn(id="u3", role=Role.USER, content="My cat Pixel knocked over my coffee this morning."),
)
USER_TURN_IDS = frozenset(t.id for t in PAPER_TURNS if t.role is Role.USER)

STATED = Candidate(id="c-job", text="Software engineer at a startup in Seattle")
UNSUPPORTED = Candidate(id="c-sisters", text="Has two older sisters who live in Boston")
STEREOTYPE = Candidate(id="c-politics", text="Votes progressive and drives an electric hatchback")


def store_with(folder: Path, *profiles: CalibrationProfile) -> ProfileStore:
    """A profile store of ``folder`` holding an evidence profile and ``profiles``."""
    store = ProfileStore(folder)
    store.save(make_profile(), folder)
    for p in profiles:
        store.save(p, folder)
    return ProfileStore(folder)


def audit_profile(
    writer_model: str = WRITER_A,
    *,
    mode: ProfileMode = ProfileMode.SELF_AUDIT_SEPARATE,
    prompt_version: str = SELF_AUDIT_REF,
    audit_weight: float = 8.0,
) -> CalibrationProfile:
    return make_profile(
        mode, writer_model=writer_model, prompt_version=prompt_version, audit_weight=audit_weight
    )
