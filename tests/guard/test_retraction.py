"""What a later user sentence takes back, and what it does not.

A later sentence that denies or ends a claim's words makes the claim stale (``_retracted``). It
must be the user's own words about the same thing: not an owner named beside what is denied,
not another person's clause, not a denial the claim itself agrees with, and not a length of time
the claim is not about."""

from __future__ import annotations

import numpy as np
import pytest

from mirage_guard.guard import EvidenceLink
from mirage_guard.guard._decision import _said_otherwise, denied_words
from mirage_guard.guard._reasons import ReasonCode
from mirage_guard.guard.evidence import denied_stems, retracted_stems
from mirage_guard.guard.evidence._linker import _retracted, _Unit
from mirage_guard.guard.evidence._subject import said_of_user


def _later(claim: str, later: str, user_name: str | None = None) -> list[str]:
    """The words the later sentence retracts of a claim linked to the first one."""
    units = [_Unit("u1", "I said something about it."), _Unit("u2", later)]
    link = EvidenceLink(turn_id="u1", similarity=0.8, span=units[0].text)
    sims = np.array([0.8, 0.6], np.float32)
    out = _retracted(claim, link, sims, units, {"u1": 0, "u2": 1}, user_name)
    return out.retracted_words if out.retracted_by == "u2" else []


def test_an_owner_beside_what_is_denied_is_not_denied() -> None:
    flat = "oh and we didn't stay in Ciarán's flat in the end, we rent a house now"
    assert denied_stems(flat) == {"stay", "flat"}
    assert denied_stems("I didn't go to Jo's wedding") == {"go", "wedd"}
    # an "'s" that is "is" is no owner, and "can't believe" is surprise, not a denial
    assert denied_stems("not sure if Jo's coming") == set()
    assert denied_stems("I don't think Mum's actually selling") == {"think", "mum", "actual"}
    assert denied_stems("can't believe Dad's actually selling the house") == set()
    assert _later("Lives in Ciarán's flat in Salthill", flat) == ["flat"]
    assert _later("Lives in Galway with her partner Ciarán", flat) == []


def test_not_really_denies_what_follows_it() -> None:
    """ "I can't really speak it" denies speaking ("Speaks Gujarati fluently" is not the user's);
    "not really sure" and "don't really mind" stay what they were."""
    turn = "my Gujarati is rubbish though, I understand it but I can't really speak it."
    assert denied_stems(turn) == {"speak"}
    assert denied_words("Speaks Gujarati fluently", turn) == ["speak"]
    assert denied_stems("not really sure if we're going") == set()
    # over as many words as a plain denial: "talk to Jenna", not only "talk to"
    assert denied_stems("also I don't really talk to Jenna anymore") == {"talk", "jenna"}
    assert denied_words("Is dating Jenna", "also I don't really talk to Jenna anymore") == ["jenna"]
    assert denied_stems("I don't really mind cooking") == set()
    # "not even" likewise, but before a number it says "less than"
    dino = "His favorite is the ankylosaurus, not even T-rex, he's very particular"
    assert denied_words("Son Leo's favorite dinosaur is the T-rex", dino) == ["t-rex"]
    assert denied_stems("we're not even 5 minutes from the station") == set()


def test_hardly_denies_as_not_does() -> None:
    """ "hardly an empty nest" takes back "You have an empty nest"; "hardly 5 minutes" is less
    than; a claim that says "hardly" itself is not denied by it; "barely passed" denies nothing."""
    turn = "it's one weekend a fortnight, hardly an empty nest lol."
    assert denied_words("You have an empty nest", turn) == ["empty", "nest"]
    assert denied_stems("we're hardly 5 minutes from the station") == set()
    assert denied_words("Hardly ever drives", "I hardly drive these days") == []
    assert denied_stems("I barely passed the exam") == set()


def test_getting_back_into_something_says_it_is_not_done_now() -> None:
    """ "I want to get back into lifting" takes back "Has kept lifting regularly since college";
    a claim that says it wants to get back into it agrees; "I'm back into lifting" takes back
    nothing."""
    turn = "I want to get back into lifting."
    assert retracted_stems("Has kept lifting regularly since college", turn) == {"lift"}
    assert retracted_stems("Wants to get back into lifting", turn) == set()
    assert retracted_stems("Lifts weights", "I'm back into lifting.") == set()


def test_denying_the_doer_denies_the_doing() -> None:
    """ "we're not really hikers" takes back "Loves long hikes"; "not a baker", "Bakes bread"."""
    hikers = "we're not really hikers lol, short walks with the baby carrier is the max."
    assert denied_words("Loves long hikes in the mountains", hikers) == ["hike"]
    assert denied_words("Bakes bread every weekend", "I'm not a baker") == ["bake"]
    assert denied_words("Loves long walks", hikers) == []


def test_not_until_says_when_not_never() -> None:
    """ "Not until August. Then we're going to Puerto Rico": August is when, nothing denied."""
    later = "Not until August. Then we're going to Puerto Rico for my abuela's 90th"
    assert denied_stems(later) == set()
    assert _later("Is going to Puerto Rico in August", later) == []
    assert denied_stems("we're not going in August") == {"going", "august"}


def test_another_persons_clause_takes_back_nothing_of_the_users_fact() -> None:
    later = "she got into medicine in Accra. she chose that, not the pharmacy course at Kumasi"
    assert _later("Kwame owns and runs a pharmacy", later, user_name="Kwame") == []
    assert _later("Owns a pharmacy", later) == []
    # a claim about that person is taken back by it
    assert _later("Daughter plans to study pharmacy in Kumasi", later) == ["pharmacy"]
    # the user's own clause in the same sentence still counts
    assert _later("Owns a pharmacy", "my son is fine, but I don't own the pharmacy now") == [
        "pharmacy"
    ]
    # a plan that fell through is the user's plan, whoever its subject is
    later = "bad news. Tomasz has pulled out, a family thing"
    assert _later("Hired Tomasz to redo the bathroom", later) == ["tomasz"]
    assert said_of_user("Is vegan", "my sister is not vegan but I am") == "but I am"
    assert said_of_user("Sister is vegan", "my sister is not vegan") == "my sister is not vegan"


def test_a_claim_that_says_itself_it_was_refused_agrees_with_the_denial() -> None:
    later = "they promoted me here instead, so same title, without the insurer"
    assert retracted_stems("Turned the insurer's offer down to stay", later) == set()
    assert retracted_stems("Declined a job at the insurer", later) == set()
    assert retracted_stems("Works at the insurer", later) == {"insur"}


def test_a_denial_over_a_length_of_time_leaves_a_dated_claim() -> None:
    later = "so excited. Three years I was not in Lisbon"
    assert retracted_stems("Flies to Lisbon on the 14th", later) == set()
    assert retracted_stems("Will visit Lisbon in May", later) == set()
    assert retracted_stems("Spent eight years working in Lisbon", later) == set()
    assert retracted_stems("Lives in Lisbon", later) == {"lisbon"}  # what holds now
    assert retracted_stems("Smokes", "I haven't smoked in two years") == {"smok"}
    assert retracted_stems("Visits Lisbon often", "I was not in Lisbon last week") == {"lisbon"}
    # only the clause with the length of time: the others still deny
    both = "my wife hasn't flown in three years. I've never sailed alone before"
    assert retracted_stems("Has sailed alone before", both) == {"sail", "alone"}


def test_the_current_value_is_the_last_later_sentence_that_gives_it() -> None:
    """A claim whose number, day or month its linked turn gives otherwise (or not at all) rests
    on the last later sentence near it that gives them, when that sentence reads as a
    correction or is in a turn about the claim; never on one about something else."""
    from mirage_guard.guard.evidence._linker import CORRECTED_MIN_SIM, _current_value

    units = [_Unit("u1", "I shoot like 20 weddings a year."), _Unit("u2", "Any tips?"),
             _Unit("u3", "I said 20 weddings a year, it's more like 30."),
             _Unit("u4", "I framed 30 prints.")]  # fmt: skip
    claim, first = "Shoots about 30 weddings a year", units[0].text
    sims = np.array([0.8, 0.1, 0.5, 0.3], np.float32)
    # u4 is nearer the end but neither a correction nor in a turn about the claim (0.3 < 0.4)
    assert _current_value(claim, sims, units, first, 0) == 2
    # u3 under the similarity floor: no sentence about the claim gives 30
    low = np.array([0.8, 0.1, CORRECTED_MIN_SIM - 0.01, 0.3], np.float32)
    assert _current_value(claim, low, units, first, 0) is None
    # the linked turn says the claim's value: nothing to look for
    assert _current_value("Shoots about 20 weddings a year", sims, units, first, 0) is None
    # a later correction that says it: the last one wins, a turn about the claim counts too
    units[3] = _Unit("u4", "Actually it's 30 weddings this year.")
    assert _current_value(claim, sims, units, first, 0) == 3
    # said before the linked turn ends: not later
    assert _current_value(claim, sims, units, first, 2) == 3
    assert _current_value(claim, sims, units, first, 3) is None
    # a relative is no such value ("Update: mum is settling in" is not about a mother's move)
    units = [_Unit("u1", "My dad moved into a home."), _Unit("u2", "Update: mum is settling in.")]
    assert _current_value("Mum moved into a home", np.array([0.7, 0.5]), units, "x", 0) is None


def test_a_correction_announced_in_the_sentence_before_gives_the_current_value() -> None:
    """ "Wait, correction on something I told you before. I said 8 years, but I counted wrong,
    it's 10 years total.": the sentence with the value has no correction word, the one before it
    in the same turn has; the claim of 10 years rests on it, not on "8 years in marketing". A
    correction word in another turn's last sentence announces nothing here."""
    from mirage_guard.guard.evidence._linker import _current_value

    claim = "Has 10 years of marketing experience in total"
    units = [_Unit("u1", "8 years in marketing overall."),
             _Unit("u2", "Wait, correction on something I told you before."),
             _Unit("u2", "I said 8 years, but I counted wrong, it's 10 years total.")]  # fmt: skip
    # near the claim (0.3), but the turn is not about it (under RETRACT_MIN_SIM)
    sims = np.array([0.7, 0.1, 0.3], np.float32)
    assert _current_value(claim, sims, units, units[0].text, 0) == 2
    units[1] = _Unit("u1b", "Wait, correction on something I told you before.")
    assert _current_value(claim, sims, units, units[0].text, 0) is None


def test_a_contrast_denies_only_what_follows_not() -> None:
    """ "the exam is June 9 not June 2" affirms June and 9 and denies 2: a claim of the exam on
    9 June is not taken back by it, one on 2 June still is; a plain negation is unchanged."""
    later = "Slight panic, I realised the exam is June 9 not June 2, I had the wrong date."
    assert denied_stems(later) == {"2"}
    assert retracted_stems("Is sitting the exam on 9 June", later) == set()
    assert retracted_stems("Is sitting the exam on 2 June", later) == {"2"}
    assert denied_stems("we're going to Lisbon not Porto") == {"porto"}
    assert denied_stems("it's six years, not seven.") == {"7"}
    assert denied_stems("I do not eat meat") == {"eat", "meat"}
    assert denied_stems("I'm not a mom!!") == {"mom"}


def test_what_a_claim_sets_aside_itself_is_not_taken_back() -> None:
    """ "Swims instead of running" says itself that the user does not run: "not running anymore"
    agrees with it. A claim that runs is still taken back."""
    later = "mostly swimming because my knee is bad, not running anymore."
    assert retracted_stems("Has a bad knee and swims instead of running", later) == set()
    assert retracted_stems("Drinks tea rather than coffee", "no coffee for me") == set()
    assert retracted_stems("Is running a half marathon", later) == {"runn"}
    # a choice's "over" and a plan the claim says fell through set aside as well
    chose = "she chose Legon, not the pharmacy at KNUST"
    assert retracted_stems("Picked medicine at Legon over pharmacy at KNUST", chose) == set()
    assert retracted_stems("Flew over KNUST to see the pharmacy", chose) != set()
    fell = "the house fell through so we're staying in the flat"
    assert retracted_stems("Stays in the flat after the house purchase fell through", fell) == set()
    assert retracted_stems("Is buying a house", fell) == {"house"}


def test_a_new_amount_said_plainly_very_near_the_claim_makes_it_stale() -> None:
    """ "Rent £1,240 from April" after "Rent £1,150": no correction word, but a sentence very near
    the claim (cosine >= RESTATED_MIN_SIM) gives another amount about the same thing. A shared
    unit alone ("$310 a month" against "$3,400 a month") is not the same thing, and a sentence
    less near the claim needs a correction word."""
    from mirage_guard.guard.evidence import restated_amounts
    from mirage_guard.guard.evidence._linker import RESTATED_MIN_SIM

    assert restated_amounts("Rent is £1,150 a month", "Rent £1,240 from April.") == ["1150"]
    assert restated_amounts("Takes home $3,400 a month", "the car is $310 a month.") == []
    assert restated_amounts(
        "Starts at Halden on Monday 9 March", "start at Halden is 16 March"
    ) == ["9"]
    assert restated_amounts("Rent is £1,150 a month", "Rent £1,150 still.") == []
    units = [
        _Unit("u1", "Rent £1,150."),
        _Unit("u2", "Landlord letter came. Rent £1,240 from April."),
    ]
    link = EvidenceLink(turn_id="u1", similarity=0.8, span=units[0].text)
    last = {"u1": 0, "u2": 1}
    near = np.array([0.8, RESTATED_MIN_SIM + 0.05], np.float32)
    out = _retracted("Rent is £1,150 a month", link, near, units, last)
    assert (out.retracted_by, out.retracted_words) == ("u2", ["1150"])
    less = np.array([0.8, RESTATED_MIN_SIM - 0.05], np.float32)
    assert _retracted("Rent is £1,150 a month", link, less, units, last).retracted_by is None


def test_a_plan_the_user_pulled_out_of_or_that_fell_thru_has_ended() -> None:
    assert retracted_stems("Is buying a terrace in Eccles", "the eccles one fell thru") == {"eccl"}
    later = "we've pulled out of the appeal, she got a place at Greenside"
    assert retracted_stems("Is preparing for an appeal hearing", later) == {"appeal"}
    # after the speaker, "pulled out" alone is something else ("I pulled out my phone")
    assert retracted_stems("Has a new phone", "I pulled out my phone") == set()


def test_a_plan_said_to_be_off_has_ended() -> None:
    """ "lisbon's off obviously" and "December is off again" call a plan off; "I'm off to Porto",
    "he's off the smokes", "carol's off on long term sick", "mum's off now" and "the kids are off"
    do not."""
    trip = "Is going to Lisbon with Nathan for five days"
    assert retracted_stems(trip, "lisbon's off obviously") == {"lisbon"}
    assert retracted_stems(trip, "so the Lisbon trip is off, sorry") == {"lisbon"}
    assert retracted_stems("Is visiting London in December", "Ebo, December is off again") == {
        "decemb"
    }
    for other in ("I'm off to Lisbon in May", "carol's off on long term sick",
                  "the kids are off, so Lisbon it is"):  # fmt: skip
        assert retracted_stems(trip, other) == set(), other
    assert retracted_stems("Mum is staying with the user", "mum's off now") == set()
    assert retracted_stems("Smokes after work", "he's off the smokes too") == set()


def test_a_plan_ending_retracts_from_the_corrected_cosine() -> None:
    """A plan that fell through or that the user pulled out of ends the claim in a later sentence
    that reads little like it ("update, the house fell through" / "Is buying a house in
    Stockport": cosine 0.31), from CORRECTED_MIN_SIM, as does a denial in a sentence that reads
    as a correction or sets one thing against another; a plain denial or a quit that far off does
    not, nor does anything under CORRECTED_MIN_SIM."""
    from mirage_guard.guard.evidence._linker import CORRECTED_MIN_SIM, RETRACT_MIN_SIM

    def later(claim: str, text: str, sim: float) -> list[str]:
        units = [_Unit("u1", "I said something about it."), _Unit("u2", text)]
        link = EvidenceLink(turn_id="u1", similarity=0.8, span=units[0].text)
        sims = np.array([0.8, sim], np.float32)
        out = _retracted(claim, link, sims, units, {"u1": 0, "u2": 1})
        return out.retracted_words if out.retracted_by == "u2" else []

    between = (CORRECTED_MIN_SIM + RETRACT_MIN_SIM) / 2
    house = "Is buying a house in Stockport"
    assert later(house, "update, the house fell through.", between) == ["house"]
    appeal = "Is preparing for an appeal hearing at County Hall"
    assert later(appeal, "we've pulled out of the appeal", between) == ["appeal"]
    assert later(house, "update, the house fell through.", CORRECTED_MIN_SIM - 0.01) == []
    # ... and a denial in a correction or a contrast ("so not september anymore", "the 10k not
    # the half"); a plain denial or a job quit that far off may be of something else
    move = "Plans to move to Spain this September"
    assert later(move, "so not september anymore", between) == ["septemb"]
    half = "Is running the Sheffield half marathon in April"
    assert later(half, "definitely doing the 10k not the half though", between) == ["half"]
    assert later(house, "we didn't see the house", between) == []
    assert later("Knows how to make pizza dough", "i quit the pizza place", between) == []
    assert later("Knows how to make pizza dough", "i quit the pizza place", 0.5) == ["pizza"]
    # a claim that says its plan is past, or denies it, is not taken back by its ending
    assert later("Was buying a house in Stockport", "the house fell through", between) == []
    assert later("Is not buying a house in Stockport", "the house fell through", between) == []


def test_two_dates_of_one_month_are_values_of_the_same_thing() -> None:
    """A number that is a day of a month has that month as its context: "9 March" and "the 16th
    of March" give the same date otherwise, with no other word near both; another month's day
    does not."""
    from mirage_guard.guard.evidence import restated_amounts

    assert restated_amounts("Flies out on 9 March", "the new date is 16 March") == ["9"]
    assert restated_amounts("Wedding is on the 12th of September", "it's the 3rd of September") == [
        "12"
    ]
    assert restated_amounts("Flies out on 9 March", "paid 16 in April") == []


def test_a_claim_keeps_a_value_its_own_sentence_changed() -> None:
    """The claim rests on the sentence that changed its value ("interview moved to Friday now"),
    its own value said only before: a value left behind, reported as the changed value. The same
    value said again in or after that turn keeps the claim."""
    from mirage_guard.guard import Candidate, Policy, Provenance
    from mirage_guard.guard._decision import decide
    from mirage_guard.guard._reasons import ReasonCode
    from tests.calibration.factories import make_profile

    units = [
        _Unit("u1", "I have a job interview on Thursday."),
        _Unit("u2", "Oh and they just emailed, interview moved to Friday now."),
    ]
    link = EvidenceLink(turn_id="u2", similarity=0.8, span=units[1].text)
    sims = np.array([0.6, 0.8], np.float32)
    out = _retracted("Has a job interview on Thursday", link, sims, units, {"u1": 0, "u2": 1})
    assert (out.retracted_by, out.retracted_words) == ("u2", ["thursday"])
    kwargs = {"p_oi": 0.01, "p_stated": 0.99, "profile": make_profile(), "policy": Policy()}
    cand = Candidate(id="c", text="Has a job interview on Thursday")
    decision = decide(cand, out, **kwargs)  # type: ignore[arg-type]
    assert decision.provenance is Provenance.GENERATED
    changed = [r for r in decision.reasons if r.code is ReasonCode.CHANGED_VALUE]
    assert [(r.params["said"], r.params["claimed"]) for r in changed] == [("friday", "thursday")]
    # the claim's value said again after the change, or never before: not left behind
    again = [*units, _Unit("u3", "Sorry, Thursday after all, they moved it back.")]
    last = {"u1": 0, "u2": 1, "u3": 2}
    sims3 = np.array([0.6, 0.8, 0.1], np.float32)
    assert _retracted(cand.text, link, sims3, again, last).retracted_by is None
    assert _retracted(cand.text, link, sims[1:], units[1:], {"u2": 0}).retracted_by is None


def test_a_new_value_phrase_reads_as_a_change() -> None:
    """ "going up to", "went down to", "turned 16": a sentence that gives a new value reads as a
    change of what was said before, as "actually" does."""
    from mirage_guard.guard.evidence._discourse import is_correction

    for text in (
        "rent going up to 925 from april",
        "I went down to three days a week at the office",
        "he turned 16 last week",
        "they rescheduled it",
    ):
        assert is_correction(text), text
    for text in ("I can carry up to 10 kg", "we went down to the beach", "rent is 925"):
        assert not is_correction(text), text


def test_a_move_a_switch_or_a_transfer_reads_as_a_change() -> None:
    """ "I moved the hives to my cousin's farm", "since the switch to Octopus", "she's
    transferring to Portland State": what was said has moved on, as after "actually"; a move in,
    a broken switch or an appointment do not say so."""
    from mirage_guard.guard.evidence._discourse import is_correction

    for text in (
        "I moved the hives to my cousin's farm near Koscierzyna.",
        "Since the switch to Octopus the DD is £96.",
        "Also switching energy.",
        "she's transferring to Portland State in the spring",
        "My brother sold the plot near Kartuzy",
        "I was appointed principal from January",
        "no more QA for me",
        "the Lisbon trip got cancelled",
    ):
        assert is_correction(text), text
    for text in (
        "we moved in last year",
        "the light switch is broken",
        "my appointment is on Friday",
        "he sold me his old bike",
    ):
        assert not is_correction(text), text


def test_a_relative_moved_on_in_a_later_move_makes_the_claim_stale() -> None:
    """ "Keeps three hives on his brother's plot near Kartuzy" ... "I moved the hives to my
    cousin's farm near Koscierzyna": a move in a sentence about the claim gives another relative
    where the claim has the brother, so the claim is stale (before the move read as a change,
    the same sentence gave nothing)."""
    units = [
        _Unit("u1", "I have three hives now, on my brother's plot near Kartuzy."),
        _Unit("u2", "I moved the hives to my cousin's farm near Koscierzyna."),
    ]
    link = EvidenceLink(turn_id="u1", similarity=0.9, span=units[0].text)
    sims = np.array([0.9, 0.53], np.float32)
    claim = "Keeps three hives on his brother's plot near Kartuzy"
    out = _retracted(claim, link, sims, units, {"u1": 0, "u2": 1})
    assert (out.retracted_by, out.retracted_words) == ("u2", ["brother"])
    kept = [units[0], _Unit("u2", "The hives are on my cousin's farm near Koscierzyna.")]
    assert _retracted(claim, link, sims, kept, {"u1": 0, "u2": 1}).retracted_by is None


def test_a_try_does_not_say_its_outcome() -> None:
    """ "Got the team leader job" from "i've applied for the team leader role though" is a
    changed value (the try, the outcome); a claim that says the try, a hedge or a negation, or a
    turn that says the outcome too, gives nothing."""
    from mirage_guard.guard.evidence import outcome_unsaid

    applied = "i've applied for the team leader role though"
    assert outcome_unsaid("Got the team leader job", applied) == ("applied for", "got")
    masters = "also i've decided to apply for a part time masters in data science at de montfort."
    assert outcome_unsaid("Is starting a part-time master's in data science", masters) == (
        "apply for",
        "starting",
    )
    assert outcome_unsaid("Applied for the team leader job", applied) is None
    assert outcome_unsaid("Might get the team leader job", applied) is None
    assert outcome_unsaid("Got the team leader job", f"{applied} and got it!") is None
    assert outcome_unsaid("Got a new bike", applied) is None  # another thing
    pgce = "changed my mind about primary, I'm going for a PGCE in chemistry instead"
    assert outcome_unsaid("Completed a PGCE", pgce) == ("going for", "completed")
    assert outcome_unsaid("Is going for a PGCE in chemistry", pgce) is None
    link = EvidenceLink(turn_id="u1", similarity=0.7, span=applied)
    found = _said_otherwise("Got the team leader job", applied, link)
    assert found is not None
    assert found.code is ReasonCode.CHANGED_VALUE
    assert found.params == {"turn_id": "u1", "said": "applied for", "claimed": "got"}


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        ("Studied nursing before",
         "I'm really saving up to go back to uni next year to study nursing.",
         ("to study", "studied")),
        ("Started a new job", "I'm going to start a new job next month", ("to start", "started")),
        ("User moved to Leeds", "we want to move to Leeds soon", ("to move", "moved")),
        ("Painted lines on the drive", "no, maybe I should paint lines.",
         ("should paint", "painted")),
        ("Called the council", "I could call the council I guess", None),  # no intention
        # done: said as done, in another form, or the plan is to do it again
        ("Moved to Leeds", "I moved to Leeds to study nursing", None),
        ("Went to uni", "I went to uni to study nursing", None),
        ("Studied law", "I want to study law, I studied history first", None),
        ("Visited Japan", "I want to visit Japan again", None),
        # a claim that says a plan, a hedge or a negation itself
        ("Plans to study nursing", "saving up to study nursing next year", None),
        ("Never studied nursing", "saving up to study nursing next year", None),
        # "to" without an intention or a later time: a purpose, not a plan
        ("Visited her mum", "I drove to Leeds to visit my mum", None),
    ],
)  # fmt: skip
def test_a_plan_does_not_say_it_was_done(
    claim: str, evidence: str, expected: tuple[str, str] | None
) -> None:
    from mirage_guard.guard.evidence import plan_given_as_done

    assert plan_given_as_done(claim, evidence) == expected


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        ("Has a cat", "I don't know, I'm more of a cat person honestly.", ("cat person", "cat")),
        ("Owns a dog", "we're both dog lovers", ("dog lovers", "dog")),
        # the animal said otherwise too, another animal, a denial, a liking that is not one
        ("Has a cat", "I have a cat called Miso, I'm a total cat person", None),
        ("Has a dog", "I'm a cat person", None),
        ("Doesn't have a cat", "I'm a cat person", None),
        ("Has a dog", "my dog is a real people person", None),
        # a wish to get one, the user's or another's; a mention in a question says no more
        ("Has a cat", "also Piotr wants to get a cat and ask if everyone ok. do you think a cat "
         "in shared flat is good idea?", ("wants to get a cat", "cat")),
        ("Has a dog", "we're thinking of getting a dog", ("thinking of getting a dog", "dog")),
        ("Has a dog", "we got a dog last week, we'd love a dog that calm", None),
    ],
)  # fmt: skip
def test_a_liking_is_not_a_pet(claim: str, evidence: str, expected: tuple[str, str] | None) -> None:
    from mirage_guard.guard.evidence import liked_not_owned

    assert liked_not_owned(claim, evidence) == expected
    link = EvidenceLink(turn_id="u1", similarity=0.7, span=evidence)
    found = _said_otherwise(claim, evidence, link)
    if expected is not None:
        assert found is not None
        assert found.params == {"turn_id": "u1", "said": expected[0], "claimed": expected[1]}


def test_a_contrast_whose_affirmed_value_the_claim_says_denies_nothing_of_it() -> None:
    """ "it's six years, not seven" corrects to the claim's own "six years": the seven denies
    nothing of "Has taught 7th grade math for six years", and still denies "... seven years";
    a contrast whose affirmed value of the denied kind the claim does not say still denies."""
    fix = "One fix though, it's six years, not seven."
    assert retracted_stems("Has taught 7th grade math for six years", fix) == set()
    assert retracted_stems("Has taught 7th grade math for seven years", fix) == {"7"}
    exam = "the exam is June 9 not June 2"
    assert retracted_stems("Is sitting the ACCA FR exam on 2 June", exam) == {"2"}
    flight = "I changed my flight, it's now March 15 not the 14th."
    assert retracted_stems("Flies to Tucson on March 14", flight) == {"14"}


def test_a_denial_of_a_named_thing_the_claim_does_not_name_takes_nothing_back() -> None:
    """ "So I'm not running Berlin. I've entered Amsterdam instead" denies Berlin, not the
    running of "Is running Amsterdam on the 18th of October"; a claim that names Berlin is
    taken back, and another denial of the claim's words still counts."""
    turn = "So I'm not running Berlin. I've entered Amsterdam instead, it's on the 18th of October."
    assert retracted_stems("Is running Amsterdam on the 18th of October", turn) == set()
    assert retracted_stems("Is running Berlin in September", turn) == {"runn", "berlin"}
    assert retracted_stems("Works at Aldi", "I don't work at Tesco anymore") == set()
    assert retracted_stems("Works at Tesco", "I don't work at Tesco anymore") == {"work", "tesco"}
    both = "I don't work at Tesco anymore, I don't work at all now"
    assert retracted_stems("Works at Aldi", both) == {"work"}


def test_a_chats_short_forms_are_read_as_the_word() -> None:
    """ "not on meds for it" denies "Takes blood pressure medication"; "appt", "uni", "hrs" are
    their words; "yr" and "bf" are left as they are (measured: benchmark/GUARD_MEASUREMENTS.md)."""
    from mirage_guard.guard.evidence import stem

    turn = "blood pressure is borderline, not on meds for it."
    assert retracted_stems("Takes blood pressure medication", turn) == {"medication"}
    shorts = [stem(w) for w in ("appt", "uni", "hrs", "wks", "maths", "math")]
    words = ("appointment", "university", "hours", "weeks", "mathematics", "mathematics")
    assert shorts == [stem(w) for w in words]
    maths = "Oh I don't have a maths degree, I didn't go to uni."
    assert retracted_stems("Has a degree in mathematics", maths) == {"mathematic"}
    assert stem("yr") == "yr"
    assert stem("bf") == "bf"


def test_a_plan_the_user_was_going_to_carry_out_did_not_happen() -> None:
    """ "we were going to get a new electric one but the prices are mad" takes back "Is buying a
    new electric car"; after someone else ("she was going to come") it ends nothing, and a claim
    that says the plan is past agrees with it."""
    turn = "we were going to get a new electric one but the prices are mad, so a hybrid instead"
    car = "Is buying a new electric car"
    assert retracted_stems(car, turn) == {"new"}
    assert retracted_stems(car, "she was going to get a new one") == set()
    assert retracted_stems("Was going to buy a new electric car", turn) == set()


def _later_in_band(claim: str, text: str) -> list[str]:
    """The words a later sentence ``text`` takes back of ``claim`` at a cosine between
    CORRECTED_MIN_SIM and RETRACT_MIN_SIM, [] when it takes nothing back."""
    from mirage_guard.guard.evidence._linker import CORRECTED_MIN_SIM, RETRACT_MIN_SIM

    units = [_Unit("u1", "I said something about it."), _Unit("u2", text)]
    link = EvidenceLink(turn_id="u1", similarity=0.8, span=units[0].text)
    sims = np.array([0.8, (CORRECTED_MIN_SIM + RETRACT_MIN_SIM) / 2], np.float32)
    out = _retracted(claim, link, sims, units, {"u1": 0, "u2": 1})
    return out.retracted_words if out.retracted_by == "u2" else []


def test_a_workplace_the_user_left_retracts_from_the_corrected_cosine() -> None:
    """ "I left the sports clinic, I started at St James's ..." takes back "Works at a sports
    clinic treating footballers and rugby players" at cosine 0.37: the place the claim says the
    user works at, all of its words ended; a quit of a place the claim only mentions does not
    ("Knows how to make pizza dough" / "i quit the pizza place"), nor a leaving of part of it."""
    from mirage_guard.guard.evidence._text import workplace

    clinic = "Works at a sports clinic treating footballers and rugby players"
    assert workplace(clinic) == ("sport", "clinic")
    assert workplace("Works night shifts at the hospital") == ("hospital",)
    left = "I left the sports clinic, I started at St James's in the outpatient MSK team"
    assert _later_in_band(clinic, left) == ["clinic", "sport"]
    assert _later_in_band("Knows how to make pizza dough", "i quit the pizza place") == []
    assert _later_in_band("Works at the pizza place on Elm Street", "i quit the pizza place") == [
        "pizza",
        "place",
    ]
    assert _later_in_band(clinic, "she left the sports clinic last year") == []


def test_a_denial_whose_subject_is_he_or_she_denies_nothing_of_the_user() -> None:
    """ "Jo is a nurse but she's not going to work the first year" denied "work" of "The user is
    a UX designer working fully remote"; a clause whose own subject is "he", "she" or "they"
    is that person's. The user's own denial in the same turn still denies, and a claim about
    someone else is still denied by that person's clauses."""
    turn = (
        "I'm a UX designer, fully remote for a company in Minneapolis. Jo is a nurse but she's "
        "not going to work the first year."
    )
    assert denied_words("The user is a UX designer working fully remote for a company", turn) == []
    assert denied_words("Has a valid driver's license", "he's 15 he cant drive, so its me") == []
    mine = "she's at Aldi now and I don't work at Tesco anymore"
    assert denied_words("Works at Tesco", mine) == ["tesco", "work"]
    assert denied_words("Partner Jo works as a nurse", turn) == ["work"]


def test_a_denial_of_a_name_the_claim_says_retracts_from_the_corrected_cosine() -> None:
    """ "I'm not going to Melbourne." takes back "Is applying to RMIT in Melbourne for a game
    design master's" at cosine 0.34: a denial of a place or person the claim names; a denial
    that far off of the claim's other words does not ("we didn't see the house")."""
    rmit = "Is applying to RMIT in Melbourne for a game design master's"
    assert _later_in_band(rmit, "I'm not going to Melbourne.") == ["melbourne"]
    assert _later_in_band(rmit, "I'm not applying anywhere yet.") == []
    assert _later_in_band(rmit, "my sister isn't going to Melbourne") == []
    assert _later_in_band("Is buying a house in Stockport", "we didn't see the house") == []


def test_a_later_birthday_leaves_the_claims_age_behind() -> None:
    """ "he turned 16 last week" takes back "Son Finn is 15" (cosine 0.38): the age of the
    person the claim is about; the speaker's own birthday only a claim about the user's age,
    another person's ("mum turned 70") nothing of Finn's, and the same age nothing."""
    from mirage_guard.guard.evidence import aged_since
    from mirage_guard.guard.evidence._linker import CORRECTED_MIN_SIM, RETRACT_MIN_SIM

    units = [_Unit("u1", "Finn is 15."), _Unit("u2", "he turned 16 last week, wants his L's")]
    link = EvidenceLink(turn_id="u1", similarity=0.8, span=units[0].text)
    sims = np.array([0.8, (CORRECTED_MIN_SIM + RETRACT_MIN_SIM) / 2], np.float32)
    out = _retracted("Son Finn is 15", link, sims, units, {"u1": 0, "u2": 1})
    assert (out.retracted_by, out.retracted_words) == ("u2", ["15"])
    assert aged_since("Son Finn is 15", "mum turned 70 last week") == frozenset()
    assert aged_since("Son Finn is 15", "I turned 40 on sunday") == frozenset()
    assert aged_since("Son Finn is 16", "he turned 16 last week") == frozenset()
    assert aged_since("Is 34 years old", "i just turned 35 lol") == {"34"}
    assert aged_since("Is 34 years old", "she turned 35") == frozenset()
    assert aged_since("Has a 7-year-old daughter", "she turned 8 on sunday") == {"7"}
    assert aged_since("Is 15 minutes from work", "he turned 16") == frozenset()
    assert aged_since("Rent is 900", "he turned 16 last week") == frozenset()
    assert aged_since("Is a 34-year-old nurse", "i turned 35 in may") == {"34"}
    assert aged_since("Owns a 3-year-old car", "i turned 35 in may") == frozenset()


@pytest.mark.parametrize(
    ("claim", "turn", "denied"),
    [
        # the user's role denied through the people it comes from
        ("Is a grandmother", "No grandchildren yet, pray for us.", ["grandmother"]),
        ("User is a mum of two", "we don't have kids, just the dog", ["mum"]),
        ("You're an aunt", "no nieces or nephews on either side", ["aunt"]),
        # ... said, someone else's, the claim's own negation, or not a role: nothing
        ("Is a mum", "we have two kids, 4 and 7", []),
        ("Is a mum", "my sister has no kids, she hates them", []),
        ("Is not a grandmother", "No grandchildren yet", []),
        ("Son is a grandfather", "No grandchildren yet", []),
        ("Is a teacher", "no kids in my class today", []),
    ],
)  # fmt: skip
def test_a_role_is_denied_by_a_denial_of_the_people_it_comes_from(
    claim: str, turn: str, denied: list[str]
) -> None:
    assert denied_words(claim, turn) == denied


def test_an_ending_of_only_the_claims_frame_verb_ends_something_else() -> None:
    """ "I used to live in Denver but we moved to Austin last spring": the ending is of the life
    in Denver; of "Lives in Austin" it ends only the verb that frames the place, so it denies
    nothing. A "when" beside the ending ("last year") is not something else."""
    moved = "I used to live in Denver but we moved to Austin last spring."
    assert retracted_stems("Lives in Austin", moved) == set()
    assert denied_words("Lives in Austin", moved) == []
    assert retracted_stems("Lives in Denver", moved) == {"live", "denv"}
    assert retracted_stems("Works at a bakery", "I stopped working nights two weeks ago") == set()
    assert retracted_stems("Works at a bakery", "I stopped working last year") == {"work"}
    assert retracted_stems("Works at a bakery", "I stopped working in March") == {"work"}
    # an ending of another form of the claim's word still ends it
    assert retracted_stems("Works as a pharmacist", "I quit the pharmacy job") == {"pharmacist"}


def test_what_the_user_denies_of_themselves_takes_nothing_back_of_someone_elses_fact() -> None:
    """ "Girlfriend is vegan" ... "I'm not vegan myself but I'm happy to go": the denial is the
    user's own. Her own change, or a denial of her, still takes it back."""
    assert _later("Girlfriend is vegan", "Thanks! I'm not vegan myself but I'm happy to go.") == []
    assert _later("Is vegan", "Thanks! I'm not vegan myself but I'm happy to go.") == ["vegan"]
    assert _later("Girlfriend is vegan", "she's not vegan anymore, she eats fish now") == ["vegan"]


def test_a_later_denial_of_the_person_still_takes_back_their_fact() -> None:
    """The user's own clauses are read for what they deny of the person themselves: "I don't
    have a girlfriend anymore" takes back "Girlfriend is vegan" (as "lol no girlfriend" does)."""
    later = "I don't have a girlfriend anymore, we split up."
    assert _later("Girlfriend is vegan", later) == ["girlfriend"]
    assert _later("Girlfriend is vegan", "lol no girlfriend") == ["girlfriend"]


def test_an_ending_of_the_claims_verb_in_another_form_takes_it_back() -> None:
    """ "I used to cycle to work" ends "Cycles to work", though "cycles" and "cycle" are stemmed
    "cycl" and "cycle"."""
    turn = "not really, I drive everywhere. I used to cycle to work before we moved"
    assert retracted_stems("Cycles to work", turn) == {"cycl", "work"}
    assert denied_words("Cycles to work", turn) == ["cycl", "work"]
    assert retracted_stems("Used to cycle to work", turn) == frozenset()


def test_someone_elses_quitting_ends_nothing_of_the_users() -> None:
    """ "my manager Priti just quit and they want me to cover her team" ends nothing of "Might
    want the manager job permanently": "just" before "quit" follows the speaker only when it
    opens the clause or the speaker says it ("I just quit the bakery", "just quit my job")."""
    turn = "my manager Priti just quit and they want me to cover her team for 3 months"
    assert denied_words("Might want the manager job permanently", turn) == []
    assert retracted_stems("Works at the bakery", "I just quit the bakery") == {"bakery"}
    assert retracted_stems("Has a job", "just quit my job lol") == {"job"}


def test_a_word_denied_before_another_thing_takes_back_nothing() -> None:
    """ "I don't have an accounting degree" took back "Works full time as an accounts assistant":
    the degree is denied, the accounts are said. Each side's word after the shared one is one
    the other does not say; the same phrase, or a claim that ends on the word, is still denied."""
    later = "I don't have an accounting degree actually, I did English lit and fell into accounts"
    assert retracted_stems("Works full time as an accounts assistant", later) == set()
    assert retracted_stems("Has a red bike", "I don't have a red car") == set()
    assert retracted_stems("Has an accounting degree", "I don't have an accounting degree") >= {
        "account"
    }
    assert retracted_stems("Eats red meat", "I don't eat red meat anymore") >= {"red", "meat"}
    assert retracted_stems("Has a pickup truck", "I don't have a truck yet") == {"truck"}


def test_a_number_with_its_unit_set_right_retracts_at_a_low_cosine() -> None:
    """ "Also sorry I make a mistake before, is three weeks not two." (cosine 0.25 to "Plans to
    visit the brother in Manchester for two weeks in July") corrects the claim's number: the unit
    after the new number is the claim's after its own. Not another thing's number, nor below the
    band's floor."""
    from mirage_guard.guard.evidence import corrected_count
    from mirage_guard.guard.evidence._linker import CORRECTED_MIN_SIM, COUNTED_MIN_SIM

    claim = "Plans to visit the brother in Manchester for two weeks in July"
    fix = "Also sorry I make a mistake before, is three weeks not two."
    assert corrected_count(claim, fix) == ["2"]
    assert corrected_count(claim, "is three weeks, not two") == ["2"]
    assert corrected_count("Has two kids", fix) == []
    assert corrected_count(claim, "three days not two") == []

    def at(sim: float) -> list[str]:
        units = [_Unit("u1", "I visit him for two weeks in July."), _Unit("u2", fix)]
        link = EvidenceLink(turn_id="u1", similarity=0.8, span=units[0].text)
        out = _retracted(claim, link, np.array([0.8, sim], np.float32), units, {"u1": 0, "u2": 1})
        return out.retracted_words if out.retracted_by == "u2" else []

    assert at((COUNTED_MIN_SIM + CORRECTED_MIN_SIM) / 2) == ["2"]
    assert at(COUNTED_MIN_SIM - 0.05) == []


def test_never_actually_denies_as_never_does() -> None:
    """ "I've never actually been to Colombia" took back nothing of "Has been to Colombia": the
    denial's words were "actually been to". "actually" is read past as "really" is."""
    assert "colombia" in denied_stems("I've never actually been to Colombia, Camila goes back")
    assert denied_stems("I'm not actually sure") == set()


def test_a_denied_doing_denies_its_doer_in_either_stem() -> None:
    """ "Rodrigo doesn't run at all" denies "Husband Rodrigo is also a runner": the stemmer gives
    "runner" as "runn" and "run" as "run"."""
    turn = "Rodrigo doesn't run at all he thinks I'm crazy for waking up at 5 to run"
    assert retracted_stems("Husband Rodrigo is also a runner", turn) == {"runn"}
    assert denied_words("Husband Rodrigo is also a runner", turn) == ["runn"]
    assert retracted_stems("Is a keen swimmer", "I can't swim") == {"swimm"}


def test_a_move_from_the_claims_place_leaves_it_behind() -> None:
    """ "we moved by the way from Randburg to a townhouse in Midrand" leaves "Lives in Randburg"
    behind, said in a later sentence or in the one the claim rests on; not another person's
    move, nor the place moved to."""
    from mirage_guard.guard.evidence import moved_from

    moved = "oh and we moved by the way from Randburg to a townhouse in Midrand"
    assert moved_from("Lives in Randburg", moved) == {"randburg"}
    assert moved_from("Lives in Leeds", "I've moved out of Leeds finally") == {"leed"}
    assert moved_from("Lives in Leeds", "my sister moved from Leeds to York") == frozenset()
    assert moved_from("Lives in Midrand", moved) == frozenset()
    units = [_Unit("u1", moved)]
    link = EvidenceLink(turn_id="u1", similarity=0.8, span=moved)
    out = _retracted("Lives in Randburg", link, np.array([0.8], np.float32), units, {"u1": 0})
    assert (out.retracted_by, out.retracted_words) == ("u1", ["randburg"])
    out = _retracted("Lives in Midrand", link, np.array([0.8], np.float32), units, {"u1": 0})
    assert out.retracted_by is None


def test_a_denial_in_a_turn_about_the_claim_retracts_at_a_low_cosine() -> None:
    """ "update, we're not doing the barn anymore" (0.21) in a turn whose "booked a restaurant in
    Kazimierz instead" reads as a correction (0.40) takes back "Wedding venue is a barn near
    Wieliczka"; the same denial in a turn about something else does not."""
    from mirage_guard.guard.evidence._linker import CORRECTED_MIN_SIM, COUNTED_MIN_SIM

    claim = "Wedding venue is a barn near Wieliczka"
    units = [
        _Unit("u1", "venue we like is a barn place outside Wieliczka"),
        _Unit("u2", "update, we're not doing the barn anymore, they raised it to 310 per head"),
        _Unit("u2", "booked a restaurant in Kazimierz instead, in the city"),
    ]
    link = EvidenceLink(turn_id="u1", similarity=0.8, span=units[0].text)
    low = (COUNTED_MIN_SIM + CORRECTED_MIN_SIM) / 2
    for near in (0.45, 0.3):  # the turn's nearest sentence: about it, or a correction in the band
        sims = np.array([0.8, low, near], np.float32)
        out = _retracted(claim, link, sims, units, {"u1": 0, "u2": 2})
        assert (out.retracted_by, out.retracted_words) == ("u2", ["barn"])
    sims = np.array([0.8, low, low], np.float32)
    assert _retracted(claim, link, sims, units, {"u1": 0, "u2": 2}).retracted_by is None


def test_a_workplace_left_in_a_correction_retracts_by_its_last_word() -> None:
    """ "Also fyi I've left the clinic, I'm doing relief work now instead" (0.37) takes back
    "Works three days a week at a vet clinic in Te Awamutu": the place's last word, left, in a
    sentence that reads as a correction. Without the correction's words, all of the place is
    needed."""
    from mirage_guard.guard.evidence._text import workplace

    claim = "Works three days a week at a vet clinic in Te Awamutu"
    assert workplace(claim) == ("vet", "clinic")
    left = "Also fyi I've left the clinic, I'm doing relief work now instead"
    assert _later_in_band(claim, left) == ["clinic"]
    assert _later_in_band(claim, "I left the clinic early today") == []


@pytest.mark.parametrize(
    ("claim", "evidence", "expected"),
    [
        ("Has ordered a glaze set for their wife",
         "ok the glaze set + dinner idea is good. i'll order the glazes tonight.",
         ("i'll order", "ordered")),
        ("Did 10 more practice questions", "ok imma do 10 more tomorrow before school",
         ("imma do", "did")),
        ("Has moved the shop to Shopify", "i'm thinking of moving to shopify next year",
         ("thinking of moving", "moved")),
        # said as done, or a plan with no intention or later time
        ("Has ordered new shoes", "ordered new shoes yesterday", None),
        ("Has moved to Leeds", "we're moving to Leeds", None),
        # another "-ing" form is left alone: the plan after it still reads
        ("Moved to Leeds", "we're moving to Leeds next month, I'm planning to move",
         ("to move", "moved")),
    ],
)  # fmt: skip
def test_a_perfect_or_a_plan_for_tomorrow_is_not_done(
    claim: str, evidence: str, expected: tuple[str, str] | None
) -> None:
    """ "Has ordered a glaze set" from "i'll order the glazes tonight": a perfect's past verb
    ("has", "already" read past), a plan after "imma", a later time anywhere in the sentence, and
    an "-ing" form after "thinking of"."""
    from mirage_guard.guard.evidence import plan_given_as_done

    assert plan_given_as_done(claim, evidence) == expected


def test_a_sign_up_is_a_try_not_its_outcome() -> None:
    """ "I've signed up for the over-60s induction at the leisure centre on Tuesday, not been
    yet." says the try of "Has completed the over-60s gym induction", not its outcome."""
    from mirage_guard.guard.evidence import outcome_unsaid

    turn = "Good. I've signed up for the over-60s induction at the leisure centre on Tuesday."
    assert outcome_unsaid("Has completed the over-60s gym induction", turn) == (
        "signed up for",
        "completed",
    )
    assert outcome_unsaid("Signed up for the induction", turn) is None
