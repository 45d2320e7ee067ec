"""Fail closed on languages the evidence model cannot read; profiles belong to their embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from mirage_guard.guard import Candidate, Guard, GuardSettings, Provenance, ReasonCode, Role, Turn
from mirage_guard.guard.errors import ProfileMismatchError, ProfileNotFoundError
from mirage_guard.guard.evidence import EvidenceLinker
from mirage_guard.guard.scoring import ProfileStore
from tests.fakes.embedder import CountingEmbedder, HashingEmbedder

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


class OtherEmbedder(HashingEmbedder):
    """An embedder that stands in for nothing: MiniLM's profile does not apply to it."""

    @property
    def name(self) -> str:
        return "test/multilingual"

    @property
    def profile_embedder(self) -> str:  # type: ignore[override]
        return "test/multilingual"


def test_a_profile_fitted_with_another_embedder_is_refused() -> None:
    shipped = ProfileStore().evidence_only()
    assert shipped.embedder == MINILM
    with pytest.raises(ProfileMismatchError, match="embedder"):
        Guard(linker=EvidenceLinker(OtherEmbedder()), evidence_profile=shipped)
    with pytest.raises(ProfileNotFoundError, match="test/multilingual"):
        Guard.from_settings(GuardSettings(), embedder=OtherEmbedder())
    Guard(linker=EvidenceLinker(HashingEmbedder()), evidence_profile=shipped)  # a stand-in


def test_the_profile_fitted_with_the_configured_embedder_is_chosen(tmp_path: Path) -> None:
    shipped = ProfileStore().evidence_only()
    own = shipped.model_copy(
        update={"profile_id": "evidence-multilingual", "embedder": "test/multilingual",
                "languages": ("en", "ja")}
    )  # fmt: skip
    (tmp_path / "evidence-multilingual.json").write_text(own.model_dump_json())
    guard = Guard.from_settings(GuardSettings(profile_dir=tmp_path), embedder=OtherEmbedder())
    assert guard.evidence_profile.profile_id == "evidence-multilingual"
    turns = [Turn(id="t1", role=Role.USER, content="私は東京のソフトウェアエンジニアです。")]
    (d,) = guard.tag(turns, [Candidate(text="二人の妹がいる")])
    assert ReasonCode.UNSUPPORTED_LANGUAGE not in {r.code for r in d.reasons}  # ja is covered


def test_uncovered_language_is_never_stated() -> None:
    guard = Guard.from_settings(GuardSettings(), embedder=CountingEmbedder(HashingEmbedder()))
    turns = [Turn(id="t1", role=Role.USER, content="週末はボルダリングに行きました。")]
    (d,) = guard.tag(turns, [Candidate(text="週末はボルダリングに行きました。")])
    assert d.provenance is Provenance.GENERATED
    assert d.reasons[-1].code is ReasonCode.UNSUPPORTED_LANGUAGE
    assert d.reasons[-1].params == {"language": "ja", "covered": ["en"]}
    english = [Turn(id="t1", role=Role.USER, content="I went climbing last weekend.")]
    (d,) = guard.tag(english, [Candidate(text="User went climbing last weekend")])
    assert d.provenance is Provenance.STATED


def test_a_typographic_apostrophe_is_read_as_english() -> None:
    """py3langid took "Doesn’t eat meat" (U+2019) for Frisian, and the guard failed it closed."""
    from mirage_guard.guard._language import Py3LangidDetector, language_of

    detector = Py3LangidDetector()
    assert language_of("Doesn\u2019t eat meat", detector) == language_of(
        "Doesn't eat meat", detector
    )
    assert language_of("Doesn\u2019t eat meat", detector) in (None, "en")
