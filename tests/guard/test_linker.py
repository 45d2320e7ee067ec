"""Evidence linker with the hashing fake: structure, user-only evidence, lexical features."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirage_guard.guard import Candidate, Role, Turn
from mirage_guard.guard.evidence import FEATURE_NAMES, Embedder, EvidenceLinker, cache_namespace
from mirage_guard.guard.evidence._linker import LEXICAL_WEIGHT, word_overlap
from tests.fakes.embedder import CountingEmbedder, HashingEmbedder, TableEmbedder
from tests.guard.paper import PAPER_TURNS

_LINKER = EvidenceLinker(HashingEmbedder())
WORDS = ["cat", "coffee", "Seattle", "climbing", "nurse", "night", "shift", "Pixel", "3", "not"]

turns_strategy = st.lists(
    st.tuples(
        st.sampled_from(list(Role)),
        st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join),
    ),
    max_size=6,
).map(lambda rows: [Turn(id=f"t{i}", role=r, content=c) for i, (r, c) in enumerate(rows)])
cands_strategy = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join), max_size=4
).map(lambda texts: [Candidate(id=f"c{i}", text=t) for i, t in enumerate(texts)])


def test_hashing_embedder_satisfies_the_protocol() -> None:
    emb = HashingEmbedder(dimension=64)
    assert isinstance(emb, Embedder)
    vecs = emb.encode(["a cat", "a cat", "coffee", ""])
    assert vecs.shape == (4, 64)
    assert abs(float(vecs[0] @ vecs[1]) - 1.0) < 1e-6
    assert abs(float(vecs[0] @ vecs[2])) < 0.5
    assert float(abs(vecs[3]).sum()) == 0.0


@settings(max_examples=80, deadline=None, database=None)
@given(turns=turns_strategy, cands=cands_strategy)
def test_links_only_ever_name_nonempty_user_turns(
    turns: list[Turn], cands: list[Candidate]
) -> None:
    links = _LINKER.link(turns, cands)
    assert len(links) == len(cands)
    evidence = {t.id for t in turns if t.role is Role.USER and t.content.strip()}
    for link in links:
        assert set(link.features) == set(FEATURE_NAMES)
        if evidence:
            assert link.turn_id in evidence
        else:
            assert link.turn_id is None
            assert link.features["no_user_turns"] == 1.0


def test_exact_restatement_has_full_lexical_containment() -> None:
    [link] = _LINKER.link(
        PAPER_TURNS, [Candidate(id="c", text="My cat Pixel knocked over my coffee")]
    )
    assert link.turn_id == "u3"
    assert link.features["lex_containment"] == 1.0
    assert link.features["novel_ratio"] == 0.0
    assert link.features["unsupported_names"] == 0.0


def test_a_name_said_with_or_without_its_possessive_is_a_said_name() -> None:
    turns = [
        Turn(id="u1", role=Role.USER, content="Javi got offered a job at a hospital in Denver."),
        Turn(id="u2", role=Role.USER, content="I'm going to Kunle's graduation in Leeds."),
    ]
    owned, bare, unsaid = _LINKER.link(
        turns,
        [
            Candidate(id="a", text="Is moving to Denver for Javi's new job"),
            Candidate(id="b", text="Is going to a graduation for Kunle"),
            Candidate(id="c", text="Is moving to Denver for Marta's new job"),
        ],
    )
    assert owned.features["unsupported_names"] == 0.0
    assert bare.features["unsupported_names"] == 0.0
    assert unsaid.features["unsupported_names"] == 1.0


def test_invented_details_show_up_in_the_features() -> None:
    [plain, detailed] = _LINKER.link(
        PAPER_TURNS,
        [
            Candidate(id="a", text="Went rock climbing last weekend"),
            Candidate(id="b", text="Went rock climbing at Smith Rock for 3 hours last weekend"),
        ],
    )
    assert plain.features["unsupported_numbers"] == 0.0
    assert detailed.features["unsupported_numbers"] == 1.0
    assert plain.features["unsupported_names"] == 0.0
    assert detailed.features["unsupported_names"] >= 1.0
    assert detailed.features["novel_ratio"] > plain.features["novel_ratio"]


def test_negation_mismatch_is_flagged() -> None:
    [same, flipped] = _LINKER.link(
        PAPER_TURNS,
        [
            Candidate(id="a", text="Went rock climbing"),
            Candidate(id="b", text="Has never been rock climbing"),
        ],
    )
    assert same.features["negation_mismatch"] == 0.0
    assert flipped.features["negation_mismatch"] == 1.0


def test_hedges_and_generalizers_are_counted() -> None:
    [link] = _LINKER.link(
        PAPER_TURNS, [Candidate(id="c", text="As a software engineer, probably likes sci-fi")]
    )
    assert link.features["hedges"] >= 1.0
    assert link.features["generalizers"] >= 1.0


def test_one_batch_per_write_and_turns_encoded_once() -> None:
    counting = CountingEmbedder(HashingEmbedder())
    linker = EvidenceLinker(counting)
    counting.reset()
    cands = [Candidate(id=f"c{i}", text=f"claim number {i}") for i in range(7)]
    linker.link(PAPER_TURNS, cands)
    linker.link(PAPER_TURNS, cands[:2])
    assert len(counting.calls) == 2
    user_texts = [t.content for t in PAPER_TURNS if t.role is Role.USER]
    assert sorted(counting.calls[0][:3]) == sorted(user_texts)
    assert counting.calls[1] == [c.text for c in cands[:2]]
    assert linker.cached_sentences == 3


def test_identical_sentences_in_two_turns_are_encoded_once() -> None:
    counting = CountingEmbedder(HashingEmbedder())
    linker = EvidenceLinker(counting)
    counting.reset()
    turns = [
        Turn(id="u1", role=Role.USER, content="I love tea."),
        Turn(id="u2", role=Role.USER, content="I love tea."),
    ]
    [link] = linker.link(turns, [Candidate(id="c", text="Loves tea")])
    assert counting.calls == [["I love tea.", "Loves tea"]]
    assert link.turn_id in {"u1", "u2"}


def test_a_small_cache_only_costs_speed() -> None:
    linker = EvidenceLinker(HashingEmbedder(), cache_bytes=4 * 1300)  # two or three vectors
    [link] = linker.link(PAPER_TURNS, [Candidate(id="c", text="Has a cat named Pixel")])
    assert link.turn_id == "u3"


def test_cached_sentences_are_per_namespace_and_bounded_by_bytes() -> None:
    counting = CountingEmbedder(HashingEmbedder())
    linker = EvidenceLinker(counting, cache_bytes=40 * 1300)
    turns = [Turn(id="u1", role=Role.USER, content="My sister lives in Lyon.")]
    cand = [Candidate(id="c", text="Has a sister")]
    with cache_namespace("tenant-b"):
        linker.link(turns, cand)
    counting.reset()
    with cache_namespace("tenant-a"):
        linker.link(turns, cand)  # tenant-b's cached sentence does not answer tenant-a
    assert counting.calls == [["My sister lives in Lyon.", "Has a sister"]]
    many = [Turn(id=f"u{i}", role=Role.USER, content=f"I own {i} books.") for i in range(100)]
    linker.link(many, cand)
    assert linker.cached_bytes <= 40 * 1300


# the claim is nearest by meaning to the brother's wedding (cosine 0.48) and less near to the
# turn that says what it says (0.40; the unit vectors below give these cosines)
_NEAR = "My little brother is getting married in a barn in June."
_SAYS = "I'm the best man so I'm stuck at the top table."
_CLAIM = "Is the best man"
_WEDDING_TABLE = {
    _CLAIM: [1.0, 0.0, 0.0],
    _NEAR: [0.48, float(np.sqrt(1 - 0.48**2)), 0.0],
    _SAYS: [0.40, 0.0, float(np.sqrt(1 - 0.40**2))],
}


def test_the_claims_own_words_pick_among_turns_about_the_same_thing() -> None:
    linker = EvidenceLinker(TableEmbedder(_WEDDING_TABLE))
    turns = [
        Turn(id="u1", role=Role.USER, content=_NEAR),
        Turn(id="u2", role=Role.USER, content=_SAYS),
    ]
    [link] = linker.link(turns, [Candidate(id="c", text=_CLAIM)])
    assert word_overlap([_CLAIM], [_NEAR, _SAYS]).tolist() == [[0.0, 1.0]]
    assert (link.turn_id, link.span) == ("u2", _SAYS)
    # the scores read the sentences as before: the nearest sentence by meaning and its words
    assert link.features["sim_max"] == pytest.approx(0.48, abs=1e-5)
    assert link.features["lex_containment"] == 0.0


def test_words_do_not_outweigh_a_clearly_nearer_turn() -> None:
    table = {**_WEDDING_TABLE, _SAYS: [0.25, 0.0, float(np.sqrt(1 - 0.25**2))]}
    linker = EvidenceLinker(TableEmbedder(table))
    turns = [
        Turn(id="u1", role=Role.USER, content=_NEAR),
        Turn(id="u2", role=Role.USER, content=_SAYS),
    ]
    [link] = linker.link(turns, [Candidate(id="c", text=_CLAIM)])
    # 0.48 against 0.25 + LEXICAL_WEIGHT * 1.0 (0.45): the nearer turn stays linked
    assert 0.25 + LEXICAL_WEIGHT < 0.48
    assert link.turn_id == "u1"


# "I live in Lisbon." and two compound claims whose second predicate (read with the claim's
# subject) is far from it (0.1) or near it (0.5); the claims themselves sit near the turn
_LISBON = "I live in Lisbon."
_PART_TABLE = {
    _LISBON: [1.0, 0.0, 0.0],
    "User lives in Lisbon and is a vegan.": [0.8, 0.6, 0.0],
    "User is a vegan.": [0.1, float(np.sqrt(1 - 0.1**2)), 0.0],
    "User lives in Lisbon and rents a flat there.": [0.8, 0.0, 0.6],
    "User rents a flat there.": [0.5, 0.0, float(np.sqrt(1 - 0.5**2))],
}


def test_a_later_predicate_near_no_user_sentence_is_named_on_the_link() -> None:
    from mirage_guard.guard.evidence._linker import UNRELATED_PART_MAX_SIM

    linker = EvidenceLinker(TableEmbedder(_PART_TABLE))
    turns = [Turn(id="u1", role=Role.USER, content=_LISBON)]
    claims = [
        "User lives in Lisbon and is a vegan.",
        "User lives in Lisbon and rents a flat there.",
    ]
    far, near = linker.link(turns, [Candidate(id=f"c{i}", text=c) for i, c in enumerate(claims)])
    assert 0.1 < UNRELATED_PART_MAX_SIM < 0.5
    assert far.unrelated_parts == ["User is a vegan."]
    assert near.unrelated_parts == []
    # a claim of one predicate has no later part to read (and costs no encoder call for it)
    [single] = linker.link(turns, [Candidate(id="s", text="Lives in Lisbon")])
    assert single.unrelated_parts == []


def test_a_name_the_user_says_only_in_a_question_is_said() -> None:
    """The names of a claim no user turn says, whole: a question the user asks says its names
    ("is 4 days enough in tokyo?"), though it is no evidence; the assistant's words are not the
    user's ("Fairmont"), nor is a name said only by the writer ("Leeds")."""
    linker = EvidenceLinker(HashingEmbedder())
    turns = [
        Turn(id="u1", role=Role.USER, content="is 4 days enough in tokyo? leaving in 2 weeks"),
        Turn(id="a1", role=Role.ASSISTANT, content="Four days is plenty. Stay at the Fairmont?"),
        Turn(id="u2", role=Role.USER, content="I work night shifts at the hospital."),
    ]
    claims = ["Is going to Tokyo in two weeks", "Is staying at the Fairmont in Tokyo",
              "Works night shifts at the hospital in Leeds", "Works night shifts"]  # fmt: skip
    links = linker.link(turns, [Candidate(text=c) for c in claims])
    assert [link.unsaid_names for link in links] == [[], ["fairmont"], ["leeds"], []]
    # the user's own name is said
    (named,) = linker.link(turns, [Candidate(text="Ana works nights")], user_name="Ana")
    assert named.unsaid_names == []
