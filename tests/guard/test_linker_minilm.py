"""The evidence linker with the real all-MiniLM-L6-v2 model (offline, loaded once per module)."""

from __future__ import annotations

import pytest

from mirage_guard.guard import Candidate, Role, Turn
from mirage_guard.guard.evidence import EvidenceLinker, shared_minilm, shipped_linker
from tests.fakes.embedder import CountingEmbedder
from tests.guard.paper import PAPER_TURNS, USER_TURN_IDS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def counting() -> CountingEmbedder:
    return CountingEmbedder(shared_minilm())


@pytest.fixture(scope="module")
def minilm_linker(counting: CountingEmbedder) -> EvidenceLinker:
    return EvidenceLinker(counting)


@pytest.mark.parametrize(
    ("text", "turn_id"),
    [
        ("Works as a software engineer at a Seattle startup", "u1"),
        ("Is a software engineer", "u1"),
        ("Lives in Seattle", "u1"),
        ("Went rock climbing last weekend", "u2"),
        ("Enjoys rock climbing", "u2"),
        ("Has a cat named Pixel", "u3"),
        ("Their cat knocked over the coffee", "u3"),
    ],
)
def test_paper_example_links_each_stated_claim_to_its_turn(
    minilm_linker: EvidenceLinker, text: str, turn_id: str
) -> None:
    [link] = minilm_linker.link(PAPER_TURNS, [Candidate(id="c", text=text)])
    assert link.turn_id == turn_id
    assert link.span is not None
    assert link.span in {t.content for t in PAPER_TURNS if t.id == turn_id}


def test_all_paper_claims_in_one_write(minilm_linker: EvidenceLinker) -> None:
    cands = [
        Candidate(id="job", text="Software engineer at a startup in Seattle"),
        Candidate(id="climb", text="Likes rock climbing"),
        Candidate(id="cat", text="Owns a cat called Pixel"),
    ]
    links = minilm_linker.link(PAPER_TURNS, cands)
    assert [lk.turn_id for lk in links] == ["u1", "u2", "u3"]
    # a restatement is much closer to its evidence than to the other turns
    assert all(lk.features["sim_margin"] > 0.1 for lk in links)


def test_assistant_turn_repeating_the_claim_verbatim_is_never_the_source(
    minilm_linker: EvidenceLinker,
) -> None:
    turns = [
        Turn(id="u1", role=Role.USER, content="I went bouldering with friends on Saturday."),
        Turn(id="a1", role=Role.ASSISTANT, content="You are a professional rock climber."),
        Turn(id="u2", role=Role.USER, content="Also, I need a gift idea for my sister."),
    ]
    verbatim = Candidate(id="c", text="You are a professional rock climber.")
    [link] = minilm_linker.link(turns, [verbatim])
    assert link.turn_id in {"u1", "u2"}
    # the assistant turn would have been a perfect match; the user turns are not
    assert link.similarity < 0.95


def test_every_link_names_a_user_turn(minilm_linker: EvidenceLinker) -> None:
    cands = [Candidate(id=f"c{i}", text=t.content) for i, t in enumerate(PAPER_TURNS)]
    links = minilm_linker.link(PAPER_TURNS, cands)
    assert {lk.turn_id for lk in links} <= USER_TURN_IDS
    # assistant repeats of u1 and u2 link back to the user turns they repeat
    assert links[1].turn_id == "u1"
    assert links[3].turn_id == "u2"


def test_no_user_turn_means_no_link(minilm_linker: EvidenceLinker) -> None:
    turns = [Turn(id="a1", role=Role.ASSISTANT, content="You are a nurse who loves cats.")]
    [link] = minilm_linker.link(turns, [Candidate(id="c", text="You are a nurse who loves cats.")])
    assert link.turn_id is None
    assert link.span is None
    assert link.features["no_user_turns"] == 1.0


def test_turn_embeddings_are_cached_across_writes(counting: CountingEmbedder) -> None:
    linker = EvidenceLinker(counting)
    assert linker.cached_sentences == 0
    linker.link(PAPER_TURNS, [Candidate(id="c1", text="Likes climbing")])
    after_first = linker.cached_sentences
    assert after_first == len(USER_TURN_IDS)  # one sentence per user turn, assistant turns never
    counting.reset()
    linker.link(PAPER_TURNS, [Candidate(id="c2", text="Has a cat")])
    linker.link(PAPER_TURNS, [Candidate(id="c3", text="Drinks coffee")])
    assert linker.cached_sentences == after_first
    # later writes encode only their candidates, never the turns again
    assert counting.encoded_texts == ["Has a cat", "Drinks coffee"]
    more = [*PAPER_TURNS, Turn(id="u4", role=Role.USER, content="I also play the cello.")]
    counting.reset()
    linker.link(more, [Candidate(id="c4", text="Plays the cello")])
    assert linker.cached_sentences == after_first + 1
    assert counting.calls == [["I also play the cello.", "Plays the cello"]]


def test_candidates_of_one_write_are_encoded_in_one_batch(counting: CountingEmbedder) -> None:
    linker = EvidenceLinker(counting)
    cands = [
        Candidate(id=f"c{i}", text=t)
        for i, t in enumerate(
            ["Engineer", "Climbs rocks", "Has a cat", "Drinks coffee", "Lives in Seattle"]
        )
    ]
    counting.reset()
    linker.link(PAPER_TURNS, cands)
    assert len(counting.calls) == 1
    assert counting.calls[0][-len(cands) :] == [c.text for c in cands]
    counting.reset()
    linker.link(PAPER_TURNS, cands)
    assert counting.calls == [[c.text for c in cands]]


def test_paper_example_end_to_end_with_the_shipped_profile() -> None:
    from mirage_guard.guard import Action, Guard, Provenance
    from mirage_guard.guard.scoring import ProfileStore

    # the shipped profile is fitted on the shipped linker's features (MiniLM + claim support)
    guard = Guard(linker=shipped_linker(), evidence_profile=ProfileStore().evidence_only())
    cands = [
        Candidate(id="job", text="Works as a software engineer at a Seattle startup"),
        Candidate(id="climb", text="Went rock climbing last weekend"),
        Candidate(id="cat", text="Has a cat named Pixel"),
        Candidate(id="gear", text="Probably owns climbing shoes and a chalk bag"),
        Candidate(
            id="flat", text="As a software engineer, lives in a minimalist flat with two monitors"
        ),
        Candidate(id="vote", text="Probably votes progressive since they live in Seattle"),
        Candidate(id="sisters", text="Has two older sisters"),
    ]
    d = {x.candidate.id: x for x in guard.tag(PAPER_TURNS, cands)}
    for cid, turn in (("job", "u1"), ("climb", "u2"), ("cat", "u3")):
        assert (d[cid].provenance, d[cid].source_turn_id, d[cid].action) == (
            Provenance.STATED,
            turn,
            Action.STORE,
        ), cid
    assert (d["gear"].provenance, d["gear"].source_turn_id) == (Provenance.INFERRED, "u2")
    for cid in ("flat", "vote", "sisters"):
        assert d[cid].provenance is Provenance.GENERATED, cid
        assert d[cid].action is Action.QUARANTINE
    assert all(x.profile_id == "evidence-only" and x.calibrated for x in d.values())


MOVED = (
    Turn(id="m1", role=Role.USER, content="We live in Boston with our two cats."),
    Turn(id="m2", role=Role.ASSISTANT, content="Boston is lovely in the fall."),
    Turn(id="m3", role=Role.USER, content="I work as a pharmacist at a hospital."),
    Turn(id="m4", role=Role.USER, content="Actually we moved to Denver last spring."),
    Turn(id="m5", role=Role.USER, content="I quit the pharmacy job and now I teach chemistry."),
    Turn(id="m6", role=Role.USER, content="It's just me and the cats most evenings now."),
)


@pytest.mark.parametrize(
    ("text", "turn_id", "stale"),
    [
        ("Lives in Boston", "m1", 1.0),  # corrected later: stale
        ("Works as a pharmacist", "m3", 1.0),
        ("Lives in Denver", "m4", 0.0),  # the correction itself
        ("Teaches chemistry", "m5", 0.0),
        ("Has two cats", "m1", 0.0),  # a later sentence repeats the cats: still supported
    ],
)
def test_a_later_correction_makes_an_earlier_fact_stale(
    minilm_linker: EvidenceLinker, text: str, turn_id: str, stale: float
) -> None:
    [link] = minilm_linker.link(MOVED, [Candidate(id="c", text=text)])
    assert link.turn_id == turn_id
    assert link.features["superseded"] == stale


def test_the_issues_correction_example_with_the_shipped_guard() -> None:
    """ "Actually we moved to Denver" and "I quit the pharmacy job" make the earlier facts stale:
    never stored as stated (the issue's own example; both were stored as stated before)."""
    from mirage_guard.guard import Guard, Provenance
    from mirage_guard.guard._reasons import ReasonCode
    from mirage_guard.guard.scoring import ProfileStore

    guard = Guard(linker=shipped_linker(), evidence_profile=ProfileStore().evidence_only())
    cands = [
        Candidate(id="boston", text="Lives in Boston"),
        Candidate(id="pharmacist", text="Works as a pharmacist"),
        Candidate(id="cats", text="Has two cats"),
    ]
    d = {x.candidate.id: x for x in guard.tag(MOVED, cands)}
    for cid, later in (("boston", "m4"), ("pharmacist", "m5")):
        assert d[cid].provenance is Provenance.GENERATED, cid
        (r,) = [r for r in d[cid].reasons if r.code is ReasonCode.RETRACTED]
        assert r.params["later_turn_id"] == later
    assert d["cats"].provenance is Provenance.STATED  # a later sentence repeats the cats


def test_a_possessive_claim_is_denied_by_the_noun_it_owns() -> None:
    """ "You're on a teacher's pension" against "I'm not a teacher!": the possessive's stem is the
    noun's, so the denial reads it (before, "teacher's" matched no "teacher" and the claim was
    stored as stated)."""
    from mirage_guard.guard import Guard, Provenance
    from mirage_guard.guard._reasons import ReasonCode
    from mirage_guard.guard.scoring import ProfileStore

    guard = Guard(linker=shipped_linker(), evidence_profile=ProfileStore().evidence_only())
    turns = [Turn(id="u1", role=Role.USER, content="I'm not a teacher! I worked in insurance.")]
    (d,) = guard.tag(turns, [Candidate(text="You're on a teacher's pension")])
    assert d.provenance is Provenance.GENERATED
    (r,) = [r for r in d.reasons if r.code is ReasonCode.DENIED]
    assert r.params["words"] == ["teach"]


def test_a_claim_that_names_the_user_asserts_no_unsaid_name() -> None:
    """ "For 38 years Ingrid worked as a pharmacist": with the user's name given, "Ingrid" is not
    a name or a word the user never said (the features, the unsupported words, the reasons);
    without it, it is, as before."""
    from mirage_guard.guard import Guard
    from mirage_guard.guard._reasons import ReasonCode
    from mirage_guard.guard.scoring import ProfileStore

    guard = Guard(linker=shipped_linker(), evidence_profile=ProfileStore().evidence_only())
    turns = [Turn(id="u1", role=Role.USER, content="I was a pharmacist for 38 years.")]
    cand = [Candidate(text="For 38 years Ingrid worked as a pharmacist")]
    (named,) = guard.link(turns, cand, user_name="Ingrid Solberg")
    (bare,) = guard.link(turns, cand)
    assert (named.features["unsupported_names"], bare.features["unsupported_names"]) == (0.0, 1.0)
    assert named.features["novel_ratio"] < bare.features["novel_ratio"]
    assert "ingrid" not in named.unsupported_words
    assert "ingrid" in bare.unsupported_words
    (d,) = guard.tag(turns, cand, user_name="Ingrid Solberg")
    said = [r.params["words"] for r in d.reasons if r.code is ReasonCode.UNSUPPORTED_CONTENT]
    assert not any("ingrid" in words for words in said)


def test_the_support_model_reads_the_turn_the_claim_is_linked_to() -> None:
    """ "Partner Ciaran drives the 401 bus": the turn that says it ("he drives the 401 bus so he
    earns a bit more than me") is the third nearest by meaning, and the claim is linked to it by
    its words. The claim-support model and the token aligner read the linked turn (and the
    nearest other): before, they read the two nearest by meaning only, found "drives", "401" and
    "bus" unsaid and the claim unsupported, and the guard stored a stated fact as generated."""
    turns = [
        Turn(id="u1", role=Role.USER, content="right, big news, myself and Ciaran are moving in "
             "together in January. his flat in Salthill. how do we split bills fairly"),
        Turn(id="u2", role=Role.USER, content="I'm not a mom!! she's my NIECE lol. no kids here "
             "yet. Ciaran is terrified of her"),
        Turn(id="u3", role=Role.USER, content="he drives the 401 bus so he earns a bit more than "
             "me, about 38k vs my 31k"),
    ]  # fmt: skip
    (link,) = shipped_linker().link(turns, [Candidate(text="Partner Ciaran drives the 401 bus")])
    assert link.turn_id == "u3"
    assert not {"drives", "401", "bus"} & set(link.unsupported_words)


def test_another_persons_fact_is_generated_by_the_shipped_guard() -> None:
    """The mem0_short case: the whole shipped guard (MiniLM, cross-encoder, profile) read "User
    is vegan" from the girlfriend's clause as the user's stated fact; now it is generated and the
    reason names her. The user's own fact in the same turn and the girlfriend's fact written as
    hers are not touched by the rule."""
    from mirage_guard.guard import Guard, Provenance
    from mirage_guard.guard._reasons import ReasonCode
    from mirage_guard.guard.scoring import ProfileStore

    guard = Guard(linker=shipped_linker(), evidence_profile=ProfileStore().evidence_only())
    turns = [
        Turn(id="u1", role=Role.USER, content="Can you help me plan meals? I work 12-hour shifts."),
        Turn(id="a1", role=Role.ASSISTANT, content="Sure. Anyone else to cook for?"),
        Turn(
            id="u2",
            role=Role.USER,
            content="No, just me. My girlfriend does her own thing, she's vegan and she makes fun "
            "of my chicken-and-rice boxes.",
        ),
    ]
    cands = [
        Candidate(id="vegan", text="User is vegan"),
        Candidate(id="hers", text="Girlfriend is vegan"),
        Candidate(id="shifts", text="Works 12-hour shifts"),
    ]
    d = {x.candidate.id: x for x in guard.tag(turns, cands)}
    assert d["vegan"].provenance is Provenance.GENERATED
    (r,) = [r for r in d["vegan"].reasons if r.code is ReasonCode.OTHER_PERSONS_FACT]
    assert r.params["person"] == "girlfriend"
    assert r.params["words"] == ["vegan"]
    for cid in ("hers", "shifts"):
        assert d[cid].provenance is not Provenance.GENERATED, cid
        assert ReasonCode.OTHER_PERSONS_FACT not in {x.code for x in d[cid].reasons}


def test_a_name_the_conversation_gave_someone_reads_as_theirs_in_lower_case() -> None:
    """The people_mentions case: "my girlfriend Jess" in one turn, "jess is training for a half
    marathon" in a later one. The guard gathers the names the user's turns give others, so the
    later lower-case clause is Jess's and "User is training for a half marathon" is generated;
    without the first turn "jess" is just a word and the claim stays the user's."""
    from mirage_guard.guard import Guard, Provenance
    from mirage_guard.guard._reasons import ReasonCode
    from mirage_guard.guard.scoring import ProfileStore

    guard = Guard(linker=shipped_linker(), evidence_profile=ProfileStore().evidence_only())
    intro = Turn(id="u1", role=Role.USER, content="it's me and my girlfriend Jess and her 2 kids.")
    later = Turn(
        id="u2",
        role=Role.USER,
        content="oh and jess is training for a half marathon in june so she needs loads of carbs",
    )
    claim = Candidate(id="run", text="User is training for a half marathon in June")
    (d,) = guard.tag([intro, later], [claim])
    assert d.provenance is Provenance.GENERATED
    (r,) = [r for r in d.reasons if r.code is ReasonCode.OTHER_PERSONS_FACT]
    assert r.params["person"] == "jess"
    (alone,) = guard.tag([later], [claim])
    assert ReasonCode.OTHER_PERSONS_FACT not in {x.code for x in alone.reasons}
