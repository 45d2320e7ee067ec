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


# Memory entries written for this check (2026-12-05): Mem0-style English entries, several with
# West African names, and the same kinds of entry in 20 other languages. py3langid takes some of
# the English ones for Nigerian Pidgin ("Is 36 years old": pcm 0.53); the guard must not fail
# them closed, and must still fail closed on every entry it is confident is in another language.
ENGLISH_ENTRIES = [
    "Is 36 years old",
    "Turning 40 in March",
    "Has two kids, Ada and Tomi",
    "Works as a nurse in Lagos",
    "Name is Chidi",
    "Is vegetarian since 2019",
    "Prefers morning workouts",
    "Wife is called Ngozi",
    "Lives in Abuja with his mother",
    "Son Emeka is 7 years old",
    "Drives a 2015 Toyota Corolla",
    "Is learning to play the guitar",
    "Has a dog named Biscuit",
    "Moved to Leeds in 2021",
    "Is allergic to peanuts",
    "Visits his parents every Sunday",
    "Daughter starts school in September",
    "Works night shifts at the warehouse",
    "Is saving for a house deposit",
    "Runs 5k three times a week",
    "Is training for the Berlin marathon",
    "Sister Amaka is a doctor",
    "Plans to visit Accra in December",
    "Is 29 and single",
    "Goes to church on Sundays",
    "Has been married for ten years",
    "Owns a small bakery",
    "Is studying accounting part time",
    "Likes jollof rice and suya",
    "Is turning 60 in October",
    "Mother is 82",
    "Has a meeting on Tuesday",
    "Kuba is coming for the weekend",
    "Wants to buy a car next year",
    "Budget is 500 dollars a month",
    "Teaches maths at a secondary school",
    "Is a vice-principal in Ikeja",
    "Is 45 years old and divorced",
    "Father passed away last year",
    "Hates the cold weather",
]
OTHER_LANGUAGE_ENTRIES = [  # (text, language)
    ("Vive en Lisboa con su pareja", "es"),
    ("Tiene dos hijos pequeños", "es"),
    ("Trabaja como enfermera de noche", "es"),
    ("Es vegetariana desde hace años", "es"),
    ("Habite à Paris depuis 2019", "fr"),
    ("A deux enfants et un chat", "fr"),
    ("Travaille comme infirmière", "fr"),
    ("Est végétarien depuis longtemps", "fr"),
    ("Ist Vegetarier und läuft gern", "de"),
    ("Hat zwei Kinder und einen Hund", "de"),
    ("Arbeitet als Krankenschwester", "de"),
    ("Wohnt seit drei Jahren in Berlin", "de"),
    ("Abita a Milano con la sorella", "it"),
    ("Ha due figli e un gatto", "it"),
    ("Lavora come infermiera di notte", "it"),
    ("Mora em Lisboa há dois anos", "pt"),
    ("Tem dois filhos e um cão", "pt"),
    ("Trabalha como enfermeira", "pt"),
    ("Woont al drie jaar in Utrecht", "nl"),
    ("Heeft twee kinderen en een hond", "nl"),
    ("Werkt als verpleegkundige", "nl"),
    ("Mieszka w Krakowie od dwóch lat", "pl"),
    ("Ma dwoje dzieci i psa", "pl"),
    ("Pracuje jako pielęgniarka", "pl"),
    ("Har två barn och en hund", "sv"),
    ("Arbetar som sjuksköterska", "sv"),
    ("Bor i København med sin kone", "da"),
    ("Har to børn og en hund", "da"),
    ("İstanbul'da eşiyle birlikte yaşıyor", "tr"),
    ("İki çocuğu ve bir köpeği var", "tr"),
    ("Tinggal di Jakarta bersama istrinya", "id"),
    ("Punya dua anak dan seekor anjing", "id"),
    ("Nakatira sa Maynila kasama ang asawa", "tl"),
    ("May dalawang anak at isang aso", "tl"),
    ("Anaishi Nairobi na mke wake", "sw"),
    ("Ana watoto wawili na mbwa", "sw"),
    ("Locuiește în București cu soția", "ro"),
    ("Are doi copii și un câine", "ro"),
    ("Asuu Helsingissä vaimonsa kanssa", "fi"),
]


def test_english_memory_entries_are_not_taken_for_another_language() -> None:
    from mirage_guard.guard._language import Py3LangidDetector, language_of

    detector = Py3LangidDetector()
    taken = [t for t in ENGLISH_ENTRIES if detector.rank(t)[0][0] != "en"]
    assert "Is 36 years old" in taken  # what the floor on English's probability is for
    assert all(language_of(t, detector, ("en",)) in (None, "en") for t in ENGLISH_ENTRIES)
    # without a covered language, the detector's top guess stands
    assert language_of("Is 36 years old", detector) == "pcm"


def test_entries_in_other_languages_still_fail_closed() -> None:
    from mirage_guard.guard._language import Py3LangidDetector, language_of

    detector = Py3LangidDetector()
    for text, language in OTHER_LANGUAGE_ENTRIES:
        assert language_of(text, detector, ("en",)) == language, text


def test_a_short_english_entry_from_an_english_chat_is_stated() -> None:
    guard = Guard.from_settings(GuardSettings(), embedder=CountingEmbedder(HashingEmbedder()))
    turns = [Turn(id="t1", role=Role.USER, content="I'm 36 years old and I live in Abuja.")]
    decisions = guard.tag(turns, [Candidate(text="Is 36 years old")])
    assert ReasonCode.UNSUPPORTED_LANGUAGE not in {r.code for d in decisions for r in d.reasons}
    nurse = [Turn(id="t1", role=Role.USER, content="I work nights as a nurse in Abuja.")]
    (d,) = guard.tag(nurse, [Candidate(text="Trabaja como enfermera de noche")])
    assert d.provenance is Provenance.GENERATED
    assert d.reasons[-1].code is ReasonCode.UNSUPPORTED_LANGUAGE


def test_the_conversations_language_is_read_from_its_latest_user_turns() -> None:
    """A write against a long history reads the latest user turns, whole, until they hold
    CONVERSATION_CHARS characters: py3langid's time grows with the text."""
    from mirage_guard.guard._language import CONVERSATION_CHARS, latest_user_text

    old = [
        Turn(id=f"o{i}", role=Role.USER, content="週末はボルダリングに行きました。")
        for i in range(3)
    ]
    recent = [
        Turn(id=f"u{i}", role=Role.USER, content=f"I went climbing with my sister, week {i}.")
        for i in range(200)
    ]
    reply = Turn(id="a1", role=Role.ASSISTANT, content="Sounds fun!")
    text = latest_user_text([*old, *recent, reply])
    assert text.endswith("week 199.")
    assert CONVERSATION_CHARS <= len(text) < CONVERSATION_CHARS + 60
    assert "ボルダリング" not in text
    assert "Sounds fun" not in text
    short = latest_user_text([*old, reply])
    assert short.count("ボルダリング") == 3
    guard = Guard.from_settings(GuardSettings(), embedder=CountingEmbedder(HashingEmbedder()))
    (d,) = guard.tag([*old, *recent], [Candidate(text="User went climbing with her sister")])
    assert ReasonCode.UNSUPPORTED_LANGUAGE not in {r.code for r in d.reasons}
    (d,) = guard.tag(old, [Candidate(text="週末はボルダリングに行きました")])
    assert d.reasons[-1].code is ReasonCode.UNSUPPORTED_LANGUAGE
