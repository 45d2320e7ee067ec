"""What a later user sentence takes back, and what it does not.

A later sentence that denies or ends a claim's words makes the claim stale (``_retracted``). It
must be the user's own words about the same thing: not an owner named beside what is denied,
not another person's clause, not a denial the claim itself agrees with, and not a length of time
the claim is not about."""

from __future__ import annotations

import numpy as np

from mirage_guard.guard import EvidenceLink
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
