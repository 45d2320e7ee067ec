"""Whose fact a user sentence states: the user's own, or another person's.

Users talk about the people around them: "My sister is diabetic", "My girlfriend does her own
thing, she's vegan", "Lukas is the one who speaks it, he lived in Kyoto for a year", "Sam wants
a green tie and I want burgundy". Those words are in the user's turn, so every similarity, and
the support model, reads "Is diabetic", "User is vegan", "Lived in Kyoto for a year" or "Wants
to wear a green tie" as the user's own facts. They are the other person's.

A rule on the words, clause by clause: a clause's subject is the user ("I", "we", "me and ..."),
another person ("my sister", "mum", "she", a name before a verb, "my brother's getting ...", "the
younger one, Milo, has ...", a name the conversation gave someone typed in lower case) or unsaid
(a clause that goes on from the one before it has that one's subject; a sentence that starts
without one is the user's, as people drop the "I" in chat). A claim about the user whose content
words the turn says only in clauses about another person, and who does not name that person
itself ("Has a sister who is diabetic" is the user's fact about the sister), is another person's
fact.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from mirage_guard.guard.evidence._discourse import FIRST_PERSON
from mirage_guard.guard.evidence._text import (
    DAYS,
    FRAME_STEMS,
    HEDGES,
    KIN_WORDS,
    LETTER,
    MONTHS,
    STOPWORDS,
    content_stems,
    contracted,
    kin_value,
    plain,
    proper_names,
    retracted_stems,
    sentences,
    stem,
)

# the people a user talks about: kin, partners, friends, people at work, pets
_PEOPLE = KIN_WORDS | frozenset(
    """
    ma pop parents parent sis bro sibling siblings sons daughters kid kids child children baby
    toddler partner spouse bf gf hubby nan grandparents friend friends bestie roommate roommates
    flatmate flatmates housemate housemates colleague colleagues coworker coworkers boss manager
    neighbour neighbor neighbours neighbors in-laws mil fil dog cat puppy pup kitten teammate
    teammates mate mates pal pals buddy mother-in-law father-in-law sister-in-law brother-in-law
    son-in-law daughter-in-law grandson granddaughter grandkids grandchildren stepson
    stepdaughter guest guests visitor visitors client clients customer customers tenant tenants
    landlord landlady twins triplets
    """.split()  # noqa: SIM905 - a word list reads best as text
)
# words that may stand between "my" and the person ("my little sister", "my best friend")
_PERSON_ADJECTIVES = frozenset(
    """
    little big older younger elder eldest oldest youngest best new old late twin baby own
    """.split()  # noqa: SIM905 - a word list reads best as text
)
_FIRST_SUBJECTS = frozenset(
    """i i'm i've i'd i'll im ive we we're we've we'd we'll""".split()  # noqa: SIM905 - as text
)
_THIRD_SUBJECTS = frozenset(
    """
    he she they he's she's they're he'd she'd they'd he'll she'll they'll they've hes shes
    theyre
    """.split()  # noqa: SIM905 - a word list reads best as text
)
# words before a clause's subject that are not the subject ("oh and she's vegan", "also mum is")
_LEAD = frozenset(
    """
    and but so or oh also plus then well yeah yes ok okay lol haha btw anyway though because
    cause cos coz cuz bc since while although actually honestly basically like um uh ah hmm fyi
    """.split()  # noqa: SIM905 - a word list reads best as text
)
# what follows a name that is the subject of its clause ("Sam hates", "Ruth doesn't", "Lukas is")
_AFTER_SUBJECT = frozenset(
    """
    is was has had does did doesn't didn't isn't wasn't hasn't can can't will won't would
    wouldn't could couldn't should also always never still just really already usually often
    only loves likes hates wants needs thinks says said knows lives lived works worked runs
    ran plays played speaks spoke got gets went goes used
    """.split()  # noqa: SIM905 - a word list reads best as text
)
_TOKEN = re.compile(rf"{LETTER}(?:{LETTER}|['\-])*|\d+(?:[.,]\d+)?")
# a clause ends at a comma, a semicolon, a colon, a dash or bracket, an emoji ("Tolu's mum wants
# 500 guests 😩 I'm an accountant"), and before a conjunction
_CLAUSE = re.compile(
    r"\s*(?:[,;:()]|\s[-\u2013\u2014]\s|[\u2600-\u27bf\U0001f300-\U0001faff]+)\s*"
    r"|\s+(?=(?:and|but|so|though|although|because|bc|cos|coz|cuz|while|whereas|plus)\s)",
    re.IGNORECASE,
)


# a run-on sentence, typed or dictated without a comma, goes on with another subject ("Rodrigo
# doesn't run at all he thinks I'm crazy", "there's six of us total my father-in-law is
# diabetic"): a new clause before "he", "she", "they" or "my <someone>" and a verb, unless the
# word before joins them ("I know he thinks", "the day she was born", "I think my dad is")
_RUN_ON = re.compile(
    r"\s+(?=(?:(?:he|she|they)(?:'s|'re|'d|'ll)?|my\s+[a-z]+(?:-in-law)?)\s+(?:is|was|are|were|has"
    r"|had|have|thinks|thought|says|said|does|doesn't|did|didn't|can|can't|will|won't|would"
    r"|wants|likes|loves|hates|works|lives|goes|went|gets|got|keeps|never|always|just|also"
    r"|still)\b)",
    re.IGNORECASE,
)
_JOINS = frozenset(
    """
    that if when because as what where who which whether though although think thinks thought
    know knows knew said says hope guess sure and but or so since until unless before after
    while whereas day time way reason cos cuz bc than like
    """.split()  # noqa: SIM905 - a word list reads best as text
)


def _run_on(part: str) -> list[str]:
    """``part`` cut where a run-on clause with another subject begins (:data:`_RUN_ON`)."""
    if not part or _RUN_ON.search(part) is None:
        return [part]
    out, start = [], 0
    for m in _RUN_ON.finditer(part):
        before = _TOKEN.findall(part[start : m.start()])
        if before and before[-1].lower() not in _JOINS:
            out.append(part[start : m.start()])
            start = m.end()
    return [*out, part[start:]]


@dataclass(frozen=True)
class Clause:
    """A clause of a user sentence, its subject (``user``, ``other``) and the person it names."""

    text: str
    subject: str
    person: str | None = None


def _without_s(word: str) -> str:
    """A lowercased word without an "'s", the verb's or the owner's ("brother's", "Kamil's");
    not a plural owner's "'" ("my parents' house" is theirs, not a subject)."""
    return word[:-2] if word.endswith("'s") else word


def _person_word(tok: str) -> str | None:
    """The person a word names, "brother's" too (a contraction or a possessive), or None."""
    base = _without_s(tok.lower())
    return base if base in _PEOPLE else None


def _person_after_my(toks: list[str], i: int) -> tuple[str, int] | None:
    """("sister", index after it) for "my (little) sister('s) (Ana)", else None."""
    j = i
    while j < len(toks) and toks[j].lower() in _PERSON_ADJECTIVES and j < i + 2:
        j += 1
    person = _person_word(toks[j]) if j < len(toks) else None
    return (person, j + 1) if person is not None else None


# what follows a capitalised word that opens a sentence when it is a name: not the verbs of
# events ("Surgery went fine", "Dinner got cancelled")
_AFTER_NAME_OPENING = _AFTER_SUBJECT - frozenset(
    ("went", "got", "ran", "used", "played", "spoke", "lived", "worked", "goes", "gets", "runs")
)
_NOT_NAME_ENDINGS = ("ing", "tion", "sion", "ness", "ity", "ment", "ism", "ence", "ance")
# third-person verbs after a name that _AFTER_SUBJECT does not list
_VERBS_S = frozenset(
    """
    eats drinks cooks bakes swims rides drives teaches studies hates dislikes prefers enjoys
    swears owns keeps takes makes visits wears smokes reads writes sings dances trains
    """.split()  # noqa: SIM905 - a word list reads best as text
)

# verbs in the past that make a word before them a subject ("my dad had", "Grew up in")
_IRREGULAR_PAST = frozenset(
    """
    was had did grew went got made took ran met became began bought left lost won sold kept
    built spent wrote drove flew gave found felt knew taught thought told came saw broke chose
    """.split()  # noqa: SIM905 - a word list reads best as text
)
# a clause that opens with one of these has the subject of a name alone before it
_OPENING_VERBS = _AFTER_SUBJECT | _VERBS_S | _IRREGULAR_PAST
# ... and after a name the conversation gave someone, the verb's base form, as people typing in
# a second language write it ("Zosia have allergy to nuts", "Marek work nights")
_BASE_VERBS = frozenset(
    "have do go like love want need work live eat drink play study speak know say think".split()  # noqa: SIM905
)

_Subject = tuple[str, str | None, int]


def _name_at(toks: list[str], j: int, people: frozenset[str] = frozenset()) -> str | None:
    """The name right after a person ("my wife Claire"; "my husband felix", a name the
    conversation gives someone, in any case), or None."""
    if j >= len(toks) or toks[j] == "I":
        return None
    return toks[j] if toks[j][:1].isupper() or toks[j].lower() in people else None


def _subject(
    toks: list[str],
    *,
    opens_sentence: bool = False,
    user: frozenset[str] = frozenset(),
    people: frozenset[str] = frozenset(),
) -> _Subject | None:
    """(subject, person, index after the subject) of a clause's tokens, or None when the clause
    does not say one.
    ``opens_sentence``: the clause starts its sentence, where every word is capitalised, so a
    capitalised word is a name only before a verb people do ("Keisha has", not "Surgery went").
    ``user``: the user's own name, lowercased, by its parts (their name is them). ``people``: the
    names the conversation gives other people, lowercased: typed in lower case ("jess is training
    for a half marathon") they are names all the same."""
    i = 0
    while i < len(toks) - 1 and toks[i].lower() in _LEAD:
        i += 1
    if i >= len(toks):
        return None
    first = toks[i].lower()
    if first in _FIRST_SUBJECTS or (first == "me" and i + 1 < len(toks) and toks[i + 1] == "and"):
        return "user", None, i + 1
    if first in _THIRD_SUBJECTS:
        return "other", None, i + 1
    if first in ("my", "our"):
        found = _person_after_my(toks, i + 1)
        if found is None:
            return None
        person, j = found
        if toks[j - 1].lower().endswith("'s"):
            if contracted(toks, j):
                return "other", person, j  # "my little brother's getting married"
            return None  # "my sister's wedding": a thing, not the person
        if j < len(toks) and toks[j] == "and":
            return "user", None, j  # "my wife and I"
        name = _name_at(toks, j, people)
        return "other", (name or person).lower(), j + (name is not None)
    theirs = _theirs(toks, i, people)
    if theirs is not None:
        return theirs
    someone = _someone(toks, i) if first in ("a", "an", "one", "the") else None
    if someone is not None:
        return someone
    after = toks[i + 1].lower() if i + 1 < len(toks) else ""
    if first in _PEOPLE and (after in _AFTER_SUBJECT or after.endswith("'s")):
        return "other", first, i + 1  # "mum is strictly vegetarian", "Dad also doesn't eat beef"
    bare = _person_word(first)
    if bare is not None and bare != first and contracted(toks, i + 1):
        return "other", bare, i + 1  # "mum's in hospital"
    return _name_subject(toks, i, opens_sentence and i == 0, user, people)


def _someone(toks: list[str], i: int) -> _Subject | None:
    """A person after an article at ``toks[i]`` as the subject: "A colleague of mine suggested
    a refinance", "one guest is allergic to nuts", "the landlord wants the flat back"."""
    found = _person_after_my(toks, i + 1)
    if found is None:
        return None
    person, j = found
    if [t.lower() for t in toks[j : j + 2]] in (["of", "mine"], ["of", "ours"]):
        return "other", person, j + 2
    after = toks[j].lower() if j < len(toks) else ""
    if not toks[j - 1].lower().endswith("'s") and (after in _AFTER_SUBJECT or _verb_s(after)):
        return "other", person, j
    return None


_OTHERS_OWNERS = frozenset(("his", "her", "their", "your", "ur"))


def _theirs(toks: list[str], i: int, people: frozenset[str]) -> _Subject | None:
    """Another person's relative as the subject at ``toks[i]``: "her mum Nicole lives in
    Wigston", "your dad is", or a name's typed without its apostrophe ("jordans mum said", "mias
    dad is a mechanic"; a name the conversation never gave too, ``_unknown_owner``), before a
    verb; the person is the relative (or the name after it)."""
    first = toks[i].lower()
    owner = (
        first in _OTHERS_OWNERS
        or (first.endswith("s") and (first[:-1] in people or first.removesuffix("'s") in people))
        or _unknown_owner(first)
    )
    if not owner:
        return None
    found = _person_after_my(toks, i + 1)
    if found is None:
        return None
    person, j = found
    if toks[j - 1].lower().endswith("'s") and not contracted(toks, j):
        return None  # "her sister's wedding": a thing, not the person
    name = _name_at(toks, j, people)
    end = j + (name is not None)
    after = toks[end].lower() if end < len(toks) else ""
    verb = after in _AFTER_SUBJECT or _verb_s(after) or (len(after) > 4 and after.endswith("ed"))
    if not (verb or contracted(toks, end)):
        return None  # "dinner for my boss and his wife on Friday": not a subject
    return "other", (name or person).lower(), end


def _unknown_owner(word: str) -> bool:
    """A word that reads as someone's possessive at a clause's start, with or without its
    apostrophe ("mias dad is a mechanic", "mia's dad is"), though the conversation never gave
    the name: a word of three letters or more and an "s" that is no word of the stop list
    ("its", "this"), no person itself ("parents") and no double "s" ("boss")."""
    if word.endswith("'s"):
        base = word[:-2]
    elif word.endswith("s"):
        base = word[:-1]
    else:
        return False
    return (
        len(base) >= 3
        and base.isalpha()
        and not word.endswith("ss")
        and word not in STOPWORDS
        and base not in STOPWORDS
        and _person_word(word) is None
        and base not in _PEOPLE
    )


def _verb_s(word: str) -> bool:
    """A word that reads as a verb in the third person after a known name ("claire walks him",
    "jess swears by it"): four letters or more ending in "s", not in "'s", "ss", "us" or "is"
    ("claire's", "boss", "bus", "this")."""
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "'s", "us", "is"))


def _name_subject(
    toks: list[str], i: int, opener: bool, user: frozenset[str], people: frozenset[str]
) -> _Subject | None:
    """A name as the subject at ``toks[i]``: capitalised before a verb ("Sam hates hiking") or
    an "'s" that is a verb ("Kamil's allergic to bleach"), or a name the conversation gave
    someone, in any case ("jess is training", "sue's got a dodgy heart"); the user's own name is
    the user. ``opener``: the word opens its sentence, where every word is capitalised."""
    word, first = toks[i], toks[i].lower()
    after = toks[i + 1].lower() if i + 1 < len(toks) else ""
    owner = _without_s(first)
    has = owner != first and contracted(toks, i + 1)
    said = has or after in _OPENING_VERBS or _verb_s(after) or after in _BASE_VERBS
    if owner in people and owner not in user and said:
        return "other", owner, i + 1
    named = (
        word[:1].isupper()
        and word != "I"
        and first not in STOPWORDS
        and first not in _LEAD
        and not word.isupper()  # an acronym: "WFPS has two divisions"
        and not first.endswith(_NOT_NAME_ENDINGS)  # "Skiing can be", "Motivation is"
        and first not in _NOT_NAMES  # "Please also mention that I am bilingual"
    )
    verbs = _AFTER_NAME_OPENING if opener else _AFTER_SUBJECT
    # an "'s" only where not every word is capitalised ("Work's been crazy"); "'s got" opening a
    # sentence is a person's ("Sam's got a student loan")
    has = has and (not opener or after == "got") and owner not in STOPWORDS
    if named and (after in verbs or after in _VERBS_S or has):
        if owner in user:
            return "user", None, i + 1
        return "other", owner, i + 1
    return None


# the user says the other person's fact is theirs too
_SHARED = re.compile(
    r"\b(?:like me|as me|as i do|as i am|me too|me as well|both of us|we both|us both|"
    r"same here|so do i|so am i|so have i)\b",
    re.IGNORECASE,
)


def _after_my(toks: list[str]) -> Iterator[tuple[str, int]]:
    """(person, index after it) of each "my <person>" in ``toks``, in order."""
    for i, tok in enumerate(toks):
        if tok.lower() in ("my", "our") and (found := _person_after_my(toks, i + 1)):
            yield found


def _my_people(toks: list[str]) -> Iterator[tuple[str, str | None]]:
    """(person, name or None) of each "my <person> (<Name>)" in ``toks``, in order."""
    for person, j in _after_my(toks):
        yield person, _name_at(toks, j)


def _named(toks: list[str]) -> str | None:
    """The last person a clause names as "my <person> (<Name>)", or None."""
    person = None
    for word, name in _my_people(toks):
        person = (name or word).lower()
    return person


# the user as the object of another person's clause
_FIRST_OBJECTS = frozenset(("me", "us"))
# another person's words about the user: "Derm said I have mild rosacea", "mum thinks im
# too thin" are the user's facts, reported
_REPORTING = frozenset(
    "said says say told tells thinks think thought reckons reckon knows noticed".split()  # noqa: SIM905
)
_FIRST_SUBJECTS = frozenset("i i'm i've i'd i'll im ive".split())  # noqa: SIM905


def _reports_user(after: Sequence[str]) -> bool:
    """A reporting verb followed by the user as the subject ("said I have", "thinks im")."""
    return any(a in _REPORTING and b in _FIRST_SUBJECTS for a, b in itertools.pairwise(after))


# words that open a sentence and are not a name, capitalised or not ("Thanks, Mel")
_NOT_NAMES = frozenset(
    "hi hey hello thanks thank sorry please no yes yeah ok okay".split()  # noqa: SIM905 - as text
) | frozenset(
    # the noun of a sentence that says what follows it ("Reason is my grandmother in Shanghai is
    # very sick", "Problem is the van", "Plan was to fly"): no one's name. Authored here
    """
    reason problem thing point truth fact trouble issue plan idea question downside upside catch
    news worry concern goal difference answer result deal situation update
    """.split()  # noqa: SIM905 - a word list reads best as text
)


def _embedded(toks: list[str]) -> _Subject | None:
    """A clause whose subject is another person after other words, the user not its subject
    ("main motivation is my dad had a heart attack", "the thing is my sister's moving"), or
    None. ``my <person>`` must be the clause's first first-person words and be followed by a
    verb, so "I told my dad", "quit my job because my boss was ..." or "that's my dad's car"
    are not."""
    for i, tok in enumerate(toks):
        low = tok.lower()
        if low in FIRST_PERSON and low not in ("my", "our"):
            return None  # the user is a subject before any person
        if low not in ("my", "our"):
            continue
        found = _person_after_my(toks, i + 1)
        if found is None:
            return None  # "quit my job because my manager was ...": the user's words first
        person, j = found
        if contracted(toks, j):
            return "other", person, j
        name = _name_at(toks, j)
        k = j + (name is not None)
        nxt = toks[k].lower() if k < len(toks) and not toks[j - 1].endswith("'s") else ""
        if nxt in _OPENING_VERBS:
            return "other", (name or person).lower(), k
    return None


# the words of a clause that only names a person ("the other flatmate", "my youngest son")
_BEFORE_PERSON = (
    frozenset(("the", "my", "our", "his", "her", "their", "other")) | _PERSON_ADJECTIVES
)


def _alone(toks: list[str], user: frozenset[str]) -> str | None:
    """The person a clause of nothing but a name or a person is ("the younger one, Milo, has a
    peanut allergy", "the other flatmate, Kwame, is never there"), or None."""
    words = [t.lower() for t in toks]
    if len(toks) <= 2 and all(t[:1].isupper() and t != "I" and not t.isupper() for t in toks):
        first = words[0]
        if first not in STOPWORDS and first not in _LEAD and first not in _NOT_NAMES:
            return None if first in user else first
        return None
    people = [w for w in words if w in _PEOPLE]
    if len(people) == 1 and all(w in _BEFORE_PERSON or w in _PEOPLE for w in words):
        return people[0]
    return None


def clauses(
    text: str, user: frozenset[str] = frozenset(), people: frozenset[str] = frozenset()
) -> list[Clause]:
    """The clauses of a user turn, each with whose fact it states; ``user``: the user's name, by
    its lowercased parts; ``people``: the names the conversation gives others, lowercased."""
    return list(_clauses(text, user, people))


def known_people(turns: Iterable[str], user_name: str | None = None) -> frozenset[str]:
    """The names a user's turns give other people ("my girlfriend Jess", "Sam hates hiking"),
    lowercased, the user's own name left out: a later "jess is vegan" is about Jess too."""
    user = name_parts(user_name)
    return frozenset().union(*(_turn_people(t, user) for t in turns))


# days and months are capitalised inside a sentence too, and name nobody
_CALENDAR = frozenset(DAYS) | frozenset(MONTHS)


@lru_cache(maxsize=16384)
def _turn_people(text: str, user: frozenset[str]) -> frozenset[str]:
    """The names one turn gives people: a clause's subject or a "my <person> <Name>" that is
    also capitalised inside a sentence (not "Rent is due" or "Lunch was great" at a sentence's
    start, where every word is), not a day or a month, not a capitalised word alone between
    commas ("Lisbon, Portugal,")."""
    inside = {n.lower() for n in proper_names(text)} - _CALENDAR
    subjects = {
        c.person
        for c in _clauses(text, user, frozenset())
        if c.person is not None and c.text.strip(" .,!?").lower() != c.person
    }
    return frozenset(
        p for p in subjects | _introduced(text) if p in inside and p not in _PEOPLE | user
    )


def _introduced(text: str) -> set[str]:
    """The names a text gives as "my <person> <Name>" anywhere, not only as a subject ("I'm best
    man at my brother Callum's wedding"), lowercased, without a possessive."""
    return {_without_s(name.lower()) for _, name in _my_people(_TOKEN.findall(text)) if name}


def name_parts(user_name: str | None) -> frozenset[str]:
    """The user's name by its lowercased parts ("O’Brien" read as "O'Brien", as turns are)."""
    return frozenset(w.lower() for w in _TOKEN.findall(plain(user_name or "")))


@lru_cache(maxsize=4096)
def _clauses(text: str, user: frozenset[str], people: frozenset[str]) -> tuple[Clause, ...]:
    """:func:`clauses`, once per turn: the claims of one write that link to the same turn read
    it parsed once."""
    out: list[Clause] = []
    last_person: str | None = None  # "My sister is visiting. She's vegan": across sentences
    for sentence in sentences(text):
        if _SHARED.search(sentence):
            out.append(Clause(sentence, "user"))  # "He was a welder, almost like me": both
            continue
        previous: tuple[str, str | None] = ("user", None)
        pending: str | None = None  # a person named alone in the clause before
        for n, part in enumerate(p for c in _CLAUSE.split(sentence) for p in _run_on(c)):
            toks = _TOKEN.findall(part or "")
            if not toks:
                continue
            lowered = {t.lower() for t in toks}
            found = _subject(toks, opens_sentence=n == 0, user=user, people=people) or _embedded(
                toks
            )
            alone = _alone(toks, user) if found is None else None
            if alone is not None:
                # "the younger one, Milo, has a peanut allergy": the clause after is theirs if it
                # opens with a verb (not "I live in Lisbon, Portugal, and work remotely")
                out.append(Clause(part.strip(), "other", alone))
                pending, last_person = alone, alone
                continue
            said: tuple[str, str | None]
            if found is None and pending is not None and toks[0].lower() in _OPENING_VERBS:
                said = ("other", pending)
            elif found is None:
                # a clause without a subject goes on from the one before ("she's vegan and never
                # eats out"), unless it speaks of the user ("so that's my week")
                said = ("user", None) if lowered & FIRST_PERSON else previous
            else:
                said = found[:2]
            after = [t.lower() for t in toks[found[2] :]] if found is not None else []
            rest = set(after)
            if said[0] == "other" and (rest & _FIRST_OBJECTS or _reports_user(after)):
                # "they made me head of product": the clause is about the user too (not "my
                # roommate says my music taste is basic": a possessive does not make it so)
                said = ("user", None)
            elif said[0] == "other" and said[1] is None:
                said = ("other", last_person)  # "she", "he": the person named before
            out.append(Clause(part.strip(), said[0], said[1]))
            # the person a later "he" or "she" is: this clause's subject, else the last person
            # it names ("I'll get my neighbour Dev to check, he's a roofer")
            last_person = (said[1] if said[0] == "other" else None) or _named(toks) or last_person
            previous, pending = said, None
    return tuple(out)


# words before a claim's verb that do not change whose fact it is
_CLAIM_LEAD = frozenset(
    """
    apparently often usually sometimes regularly currently recently now still also really
    already always never just will would can could should might may must used to
    """.split()  # noqa: SIM905 - a word list reads best as text
)
# ... and a hedge: the subject is the words before any of them ("Probably lives ...")
_LEADS = _CLAIM_LEAD | HEDGES
_THIRD_IN_CLAIM = frozenset(
    ("he", "she", "they", "it", "he's", "she's", "they're", "it's", "him", "them")
)


_USER_WORDS = frozenset(("user", "you", "i", "i'm", "you're"))


def _about_user(claim: str, user: frozenset[str] = frozenset()) -> bool:
    """Whether a claim's subject is the user: "Is vegan", "User is vegan", "You don't drink",
    "Apparently lived in Kyoto"; not "Mother has MS", "Owen dislikes hiking", "Your wife has
    been to Kew", "the album is a great recording" or a claim with "he", "she" or "it" in it."""
    toks = [t for t in _TOKEN.findall(claim) if t.lower() not in HEDGES]
    if any(t.lower() in _THIRD_IN_CLAIM for t in toks):
        return False
    if len(toks) > 1 and [t.lower() for t in toks[:2]] == ["the", "user"]:
        toks = toks[1:]  # "The user gets seasick" is "User gets seasick"
    if toks and toks[0].lower() in _USER_WORDS | user:
        return True
    while toks and toks[0].lower() in _CLAIM_LEAD:
        toks = toks[1:]
    if not toks:
        return False
    return _verb_like(toks[0].lower(), toks[1].lower() if len(toks) > 1 else "")


def about_user(claim: str, user_name: str | None = None) -> bool:
    """Whether a claim's subject is the user (:func:`_about_user`), the user's own name included
    ("Keiko enjoys cooking")."""
    return _about_user(claim, name_parts(user_name))


def _verb_like(first: str, after: str) -> bool:
    """Whether a claim's word ``first`` (lowercased), ``after`` the word that follows it, is its
    verb: a known one, or a verb in the third person or the past ("Loves", "Coaches", "Lived"),
    not a plural noun before its verb ("Parents live", "Kids are") nor an owner ("Siobhan's dad
    is ...")."""
    if first in _OPENING_VERBS:
        return True
    verb_form = first.endswith(("s", "ed")) and not first.endswith(("ss", "'s")) and len(first) > 3
    return verb_form and first not in _PEOPLE and after not in _AFTER_SUBJECT


_PEOPLE_STEMS = frozenset(stem(w) for w in _PEOPLE)
# a pet a claim names can be what it says of the user ("Has a dog" / "my partner really wants
# a dog"), not a person the user's fact is about ("Cooks vegan for his girlfriend")
_PET_STEMS = frozenset(stem(w) for w in ("dog", "cat", "puppy", "pup", "kitten"))
# prepositions the stop list keeps as content words: "until" in "so I keep them until about 6"
# says nothing of the user that "Works at the county clerk's office until 5" asserts
_PREPOSITIONS = frozenset(
    stem(w) for w in ("until", "till", "since", "around", "near", "via", "per", "onto", "across")
)
# the share of a claim's content words that the turn must say only of another person
OTHER_SHARE = 0.4
# a clause about someone else that says every word of a claim of at least this many words (not
# counting its frame) makes it that person's fact even when a clause about the user says one
WHOLE_MIN_WORDS = 3


# a clause that says what there is ("oh theres a co-op near the canal, my mate jonas volunteers
# there"): its words are said of no one, so they do not make the claim the user's
_EXISTENTIAL = re.compile(
    r"^(?:(?:oh|and|but|so|also|well|ok|okay|btw)\s+)*there(?:'s|’s|s| is| are| was| were)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class OtherPersonsFact:
    """The person whose fact the claim restates, and the claim's words said only of them."""

    person: str | None
    words: tuple[str, ...]


def other_persons_fact(
    claim: str, turn: str, user_name: str | None = None, people: frozenset[str] = frozenset()
) -> OtherPersonsFact | None:
    """Whether ``claim``, about the user, restates what ``turn`` says of another person: at
    least ``OTHER_SHARE`` of its content words are said only in clauses about someone else, none
    but its frame verbs in clauses about the user, and the claim names no person. ``user_name``:
    the user's own name, when known: a claim that opens with it is about the user ("Keiko enjoys
    cooking" / "he cooks, I burn water lol"), and a clause whose subject it is, the user's.
    ``people``: the names the conversation gives others (:func:`known_people`)."""
    user = name_parts(user_name)
    if not _about_user(claim, user):
        return None
    parts = _clauses(turn, user, people)
    if not any(c.subject == "other" for c in parts):
        return None
    wanted = {s for s in content_stems(claim) if s not in ("user", "you", "as")} - _PREPOSITIONS
    wanted -= {stem(w) for w in user}
    # the claim's names that a turn gives as "my <person> <name>": who the person is, not what is
    # said of them ("Is married to Felix" / "it's me, my husband felix and our baby")
    wanted -= _given_names(turn, frozenset(n.lower() for n in proper_names(claim)))
    said_of_user: set[str] = set()
    said_of_other: dict[str, str | None] = {}
    whole: list[str | None] = []  # the person of each clause that says all of the claim
    most_of_user = 0  # the most of the claim's words (not its frame) one user clause says
    for c in parts:
        if c.subject == "user" and _EXISTENTIAL.match(c.text):
            continue  # "theres a co-op near the canal": says what there is, of nobody
        found = wanted & content_stems(c.text)
        if c.subject == "other":
            for s in found:
                said_of_other.setdefault(s, c.person)
            if found == wanted:
                whole.append(c.person)
        else:
            said_of_user |= found
            most_of_user = max(most_of_user, len(found - FRAME_STEMS))
    all_said = whole and len(wanted - FRAME_STEMS) >= WHOLE_MIN_WORDS and most_of_user <= 1
    if all_said:
        # one clause about someone else says all of it, and no clause about the user more than a
        # word of it: "Travels for work two weeks a month" / "my husband Faisal travels for work
        # 2 weeks of the month" beside "... stay with us for a month", "i work from home"
        said_of_other = dict.fromkeys(wanted, whole[0])
        said_of_user = set()
    only_other = sorted(set(said_of_other) - said_of_user)
    # what the claim says is said of the other person, none of it of the user but its frame
    # ("Works as a GP" / "I'm a GP ... She works from home as a copywriter" is the user's)
    if not set(only_other) - FRAME_STEMS or said_of_user - FRAME_STEMS:
        return None
    if len(only_other) < OTHER_SHARE * len(wanted):
        return None
    persons = {said_of_other[s] for s in only_other}
    # the claim's words as written ("Sam's" is Sam; "same" is not)
    named = {t.lower().removesuffix("'s").removesuffix("’s") for t in _TOKEN.findall(claim)}
    if any(p is not None and p in named for p in persons):
        return None  # "Has a sister who is diabetic": the user's fact about the sister
    # a pet the claim names, said in a clause about a person the turn names, is what the claim
    # says ("Has a dog" / "my partner really wants a dog"); not in one about "she" or "they"
    pet = not named & _PEOPLE_STEMS - _PET_STEMS and None not in persons
    if named & _PEOPLE_STEMS and not all_said and not pet:
        # the claim names a person of its own ("Cooks vegan for his girlfriend"); not when one
        # clause about someone else says all of it, people included ("You're a single mum with
        # two kids" / "my sister ... she's a single mum with two kids")
        return None
    # the first person by the claim's words (sorted), so the reason is the same every run
    person = next((said_of_other[s] for s in only_other if said_of_other[s] is not None), None)
    # the claim's own words, as written, not their stems
    words = dict.fromkeys(t.lower() for t in _TOKEN.findall(claim) if stem(t) in only_other)
    return OtherPersonsFact(person, tuple(words))


# a clause that speaks of the user alone: one of these words, and none of the "we" words
_WE = frozenset(
    "we we're we've we'd we'll us our ours ourselves both together".split()  # noqa: SIM905
)
_USER_ALONE = FIRST_PERSON - _WE
_NAMED_AS = re.compile(r"\b(?:named|called)\s+(\S+)", re.IGNORECASE)


def _person_token(token: str) -> str:
    """A person word as :data:`_PEOPLE` has it: "parents'" and "Mum's" are parent and mum."""
    t = token.lower()
    for ending in ("'s", "’s", "'", "’"):
        t = t.removesuffix(ending)
    return _without_s(t)


def users_fact_given_to(
    claim: str, turn: str, user_name: str | None = None, people: frozenset[str] = frozenset()
) -> OtherPersonsFact | None:
    """The mirror of :func:`other_persons_fact`: whether ``claim``, about someone the user
    names by a relation ("Wife Ngozi is a nurse", "Brother Tom lives in York"), gives them what
    ``turn`` says only of the user ("My wife Ngozi is a teacher. I work as a nurse."; "My
    brother Tom lives in Leeds and I live in York."). At least ``OTHER_SHARE`` of the claim's
    words after its subject, and one that is not a frame verb, are said only in clauses whose
    subject is the user alone ("I", "my", never "we") and that do not name the claim's person;
    none in a clause about anyone else. ``person`` of the result is the claim's person; the
    claim's own names for them ("named Joel", a name the conversation gives someone) are not
    what it says of them."""
    persons = claim_people(claim, user_name) & _PEOPLE
    if not persons:
        return None
    user = name_parts(user_name)
    given = {m.group(1).lower() for m in _NAMED_AS.finditer(claim)}
    names = {stem(n) for n in proper_names(claim) if n.lower() in people | given}
    subject = {stem(t) for t in _subject_words(claim)}
    wanted = content_stems(claim) - subject - _PEOPLE_STEMS - _PREPOSITIONS - names
    wanted -= {stem(w) for w in user | given} | {"user", "you"}
    if not wanted:
        return None
    of_user: set[str] = set()
    elsewhere: set[str] = set()
    for c in _clauses(turn, user, people):
        toks = _TOKEN.findall(c.text)
        lowered = {t.lower() for t in toks}
        found = wanted & content_stems(c.text)
        alone = lowered & _USER_ALONE and not lowered & _WE
        if c.subject == "user" and alone and not {_person_token(t) for t in toks} & persons:
            of_user |= found
        else:
            elsewhere |= found
    only = of_user - elsewhere
    if not only - FRAME_STEMS or len(only) < OTHER_SHARE * len(wanted):
        return None
    words = dict.fromkeys(t.lower() for t in _TOKEN.findall(claim) if stem(t) in only)
    return OtherPersonsFact(" ".join(_subject_words(claim)), tuple(words))


def third_persons_fact(
    claim: str, turn: str, user_name: str | None = None, people: frozenset[str] = frozenset()
) -> OtherPersonsFact | None:
    """Whether ``claim``, about someone the conversation names ("Arjun gets anxious"), gives
    them what ``turn`` says of another named person: one clause whose subject is that person
    ("but Meera gets anxious") says every word of the claim after its subject, one of them not a
    frame verb, and no clause that names the claim's person says any of them. ``people``: the
    names the conversation gives others (:func:`known_people`). A clause about "she" or "they"
    is nobody's in particular here (it may be the claim's person), and neither is one about a
    relative or a group by their kind ("my son", "the kids"): measured on the held-out sets,
    those took a kind for another person. ``person`` of the result is the other person."""
    user = name_parts(user_name)
    if _about_user(claim, user):
        return None
    # the names the conversation gives people among the claim's words before its verb (the
    # first is capitalised there as every first word is, so the names are read, not the case)
    opening = _subject_words(claim)
    persons = {_person_token(t) for t in opening} & people
    if not persons:
        return None
    subject = {stem(t) for t in opening}
    wanted = content_stems(claim) - subject - _PREPOSITIONS - {"user", "you"}
    wanted -= {stem(w) for w in user}
    if not wanted - FRAME_STEMS:
        return None
    # one person by any of their words ("dad" is the claim's "Father")
    same = {kin_value(p) or p for p in persons}
    theirs: str | None = None
    for c in _clauses(turn, user, people | persons):
        found = wanted & content_stems(c.text)
        named = {kin_value(w) or w for t in _TOKEN.findall(c.text) if (w := _person_token(t))}
        if named & same or (c.person is not None and (kin_value(c.person) or c.person) in same):
            if found:
                return None  # said of the claim's person too
            continue
        if c.subject == "other" and c.person in people and found == wanted:
            theirs = theirs or c.person
    if theirs is None:
        return None
    words = dict.fromkeys(t.lower() for t in _TOKEN.findall(claim) if stem(t) in wanted)
    return OtherPersonsFact(theirs, tuple(words))


def _given_names(turn: str, names: frozenset[str]) -> set[str]:
    """Stems of the ``names`` that ``turn`` says right after "my <person>", in any case ("my
    husband felix")."""
    if not names:
        return set()
    toks = _TOKEN.findall(turn)
    return {stem(toks[j]) for _, j in _after_my(toks) if j < len(toks) and toks[j].lower() in names}


def said_of_user(claim: str, text: str, user_name: str | None = None) -> str:
    """What of ``text`` can take back ``claim``: for a claim about the user, the clauses that are
    not about another person ("she chose Legon, not the pharmacy at KNUST" takes back nothing of
    "Kwame runs a pharmacy"), joined by ";" so no clause runs into the next; else all of it."""
    user = name_parts(user_name)
    if not _about_user(claim, user):
        return text
    parts = _clauses(text, user, frozenset())
    if not any(c.subject == "other" for c in parts):
        return text
    return "; ".join(c.text for c in parts if c.subject != "other")


def _subject_words(claim: str) -> list[str]:
    """The words of a claim before its verb (or a hedge): "Husband Faisal does the cooking" ->
    ["Husband", "Faisal"]; [] for "Lives in Lisbon", and for a claim whose verb is none this
    module knows ("Sang a solo at her friend's funeral")."""
    toks = _TOKEN.findall(claim)
    lower = [t.lower() for t in toks] + [""]
    verbs = (i for i in range(len(toks)) if lower[i] in _LEADS or _verb_like(*lower[i : i + 2]))
    return toks[: next(verbs, 0)]  # no verb found: no subject read


def claim_people(claim: str, user_name: str | None = None) -> frozenset[str]:
    """The people a claim is about when its subject is someone else than the user, by their
    lowercased words ("Husband Faisal does the cooking" -> husband, faisal; "Brother Tom spent
    a year in Portugal" -> brother, tom); empty for a claim about the user or about a thing
    ("Kitchen budget is 25k")."""
    user = name_parts(user_name)
    if _about_user(claim, user):
        return frozenset()
    subject = _subject_words(claim)
    names = {n.lower() for n in proper_names(claim)}
    found = {
        _without_s(t.lower()) for t in subject
        if _without_s(t.lower()) in _PEOPLE or (t.lower() in names and t.lower() not in user)
    }  # fmt: skip
    return frozenset(found)


def acting_relatives(claim: str, text: str, user_name: str | None = None) -> frozenset[str]:
    """For a claim about the user, the relatives (as ``kin_value`` names them) that are the
    subject of a clause of ``text`` that says none of the claim's other words: another
    participant doing another thing, not the one the claim's user does something with ("Visits
    her father every morning before work" / "I go over every morning before work and my brother
    takes the evenings"). Not one whose clause says the claim's thing ("Has a quilt her
    grandmother made" / "The quilt my mother made"). Empty for a claim about someone else."""
    user = name_parts(user_name)
    if not _about_user(claim, user):
        return frozenset()
    own = content_stems(claim)
    out = set()
    for c in _clauses(text, user, frozenset()):
        kin = kin_value(c.person) if c.person else None
        if kin is not None and not (content_stems(c.text) - {stem(c.person or "")}) & own:
            out.add(kin)
    return frozenset(out)


def others_clauses(text: str, user_name: str | None = None) -> str:
    """``text`` without the clauses whose subject the user names as themselves ("im not a great
    cook tbh", "i've never been to portugal"), joined by ";": what can deny another person's
    fact. A clause without a subject stays ("lol no husband", "not UBC")."""
    parts = _clauses(text, name_parts(user_name), frozenset())
    return "; ".join(
        c.text for c in parts
        if c.subject != "user" or not {t.lower() for t in _TOKEN.findall(c.text)} & _FIRST_SUBJECTS
    )  # fmt: skip


def others_denials(
    claim: str, text: str, user_name: str | None = None, denied: frozenset[str] | None = None
) -> frozenset[str] | None:
    """For a claim about someone the user names ("Husband Faisal does the cooking"), the claim's
    words ``text`` denies or ends in the clauses that are not the user's own ("im not a great
    cook tbh" denies nothing of his) or by denying the person ("lol no husband", "I don't have a
    girlfriend anymore"); None for a claim about the user or a thing. ``denied``: what
    :func:`retracted_stems` finds in all of ``text``, when the caller has it."""
    people = claim_people(claim, user_name)
    if not people:
        return None
    denied = retracted_stems(claim, text) if denied is None else denied
    theirs = retracted_stems(claim, text, others_clauses(text, user_name))
    return theirs | (denied & {stem(p) for p in people})


def without_third_persons(claim: str, text: str, user_name: str | None = None) -> str:
    """For a claim about the user, ``text`` without the clauses whose own subject is "he", "she"
    or "they" ("Jo is a nurse but she's not going to work the first year"), joined by ";": what
    can deny the user's fact. A pronoun says whose clause it is; a clause the reader gives
    someone else by other means (a name, the clause before) stays."""
    user = name_parts(user_name)
    if not _about_user(claim, user):
        return text
    parts = _clauses(text, user, frozenset())
    kept = []
    for c in parts:
        toks = [t.lower() for t in _TOKEN.findall(c.text)]
        while toks and toks[0] in _LEAD:
            toks = toks[1:]
        if not (c.subject == "other" and toks and toks[0] in _THIRD_SUBJECTS):
            kept.append(c.text)
    return "; ".join(kept)


# a claim's age ("Son Finn is 15", "Is 23 years old", "Has a 7-year-old daughter", "aged 11")
_CLAIM_AGE = re.compile(
    r"\b(?:is|aged|age)\s+(?P<a>\d{1,3})\b(?!\s*(?:%|am|pm|k\b|minutes?|hours?|days?|weeks?|"
    r"months?|miles?|km|kg|people|of|percent|euros?|pounds?|dollars?))"
    r"|\b(?P<b>\d{1,3})[- ](?:years?|yrs?)[- ]old\b",
    re.I,
)
# ... and a later sentence's birthday: "he turned 16 last week", "I just turned 40"
_TURNED = re.compile(
    r"\b(?P<who>[\w']+)\s+(?:just\s+|has\s+just\s+|recently\s+|finally\s+)?turned\s+"
    r"(?P<age>\d{1,3})\b",
    re.I,
)
_SPEAKER = frozenset(("i", "i've", "ive"))


def aged_since(claim: str, text: str, user_name: str | None = None) -> frozenset[str]:
    """The claim's age that a later "turned <N>" leaves behind ("Son Finn is 15" / "he turned 16
    last week, wants to get his L's"): the speaker's birthday for a claim about the user's age,
    that of "he", "she", "they" or the claim's own person for a claim about someone else's; the
    same age, or none in the claim ("Rent is 900"), leaves nothing."""
    turned = _TURNED.search(text)
    if turned is None:
        return frozenset()
    about_user = _about_user(claim, name_parts(user_name))
    person = about_user or bool(claim_people(claim, user_name))
    ages: dict[str, bool] = {}  # age -> whether it is the user's
    for m in _CLAIM_AGE.finditer(claim):
        if m.group("a") and person and int(m.group("a")) <= 120:
            ages[m.group("a")] = about_user
        elif m.group("b"):  # "Has a 7-year-old daughter" is the daughter's age
            after = claim[m.end() :].lstrip()
            before = claim[: m.start()].lower().split()[-2:]
            # ... and "Is a 34-year-old nurse" the user's ("Owns a 3-year-old car" the car's)
            own = not after[:1].isalpha() or before in (["a"], ["is", "a"], ["i'm", "a"])
            ages[m.group("b")] = about_user and own
    if not ages or turned.group("age") in ages:
        return frozenset()
    who = turned.group("who").lower()
    speaker = who in _SPEAKER
    named = {t.lower().removesuffix("'s") for t in _TOKEN.findall(claim)}
    if not speaker and who not in _THIRD_SUBJECTS and who not in named:
        return frozenset()  # "mum turned 70" says nothing of "Son Finn is 15"
    return frozenset(a for a, users in ages.items() if users == speaker)


# where a claim goes on to assert a second thing of its subject: "Lives in Lisbon and is a
# vegan", "User lives in Lisbon, is divorced", "Father is 71 and lives alone"
_PREDICATE_JOIN = re.compile(r"\s*,\s*(?:and\s+|but\s+)?|\s+(?:and|but)\s+|\s*;\s*", re.I)


def _opens_predicate(piece: str) -> bool:
    """Whether ``piece`` starts with a verb and so asserts something of the claim's subject ("is
    a vegan", "lives alone", "never learned to drive"); not a noun phrase ("Rome", "two cats")."""
    toks = [t.lower() for t in _TOKEN.findall(piece)]
    while toks and toks[0] in _CLAIM_LEAD:
        toks = toks[1:]
    return len(toks) >= 2 and _verb_like(toks[0], toks[1])


@lru_cache(maxsize=65536)
def claim_predicates(claim: str) -> tuple[str, ...]:
    """What a claim asserts of its subject, one predicate at a time, each after the first read
    with the first one's subject: "User lives in Lisbon, is divorced" -> ("User lives in
    Lisbon", "User is divorced"); "Father is 71 and lives alone" -> ("Father is 71", "Father
    lives alone"). Only where the claim goes on with a verb: "Went to Paris and Rome", "Likes
    cats and dogs" and "Has a son who is 7" are one predicate. Unlike ``claim_parts`` (what the
    cross-encoder reads, split at "since", "who", "where" too and without a subject), each
    predicate here stands as a claim of its own, for the bi-encoder to compare."""
    pieces: list[str] = []
    start = 0
    for m in _PREDICATE_JOIN.finditer(claim):
        if claim[start : m.start()].strip() and _opens_predicate(claim[m.end() :]):
            pieces.append(claim[start : m.start()].strip())
            start = m.end()
    pieces.append(claim[start:].strip())
    pieces = [p for p in pieces if p]
    if len(pieces) < 2:
        return (claim,)
    lead = " ".join(_subject_words(pieces[0]))
    return (pieces[0], *(f"{lead} {p}".strip() for p in pieces[1:]))


# a list in a claim: "eggs and milk", "pasta, curries or stir-fries"
_LIST_JOIN = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", re.I)
# where a list item ends: the next clause or phrase word ("a dog from a shelter", "milk since
# birth"), or punctuation
_ITEM_END = frozenset(
    ("and", "or", "but", "with", "while", "along", "after", "as", "from", "who", "which", "that",
     "where", "when", "because", "since", "until", "in", "on", "at", "for", "to", "by", "during")
)  # fmt: skip
_PUNCTUATION = re.compile(r"[,.;:!?()]")
# a piece after "and" or a comma that starts with one of these is a clause, not a list item
# ("... and you run it on your own", ", so there are multiple branches", ", especially for
# winter", ", yes, the ...", ", or do you know it as ...")
_NOT_ITEM_START = frozenset(
    """
    i you he she it we they there this these those so then if also especially yes no well how
    what which who when where why because though although plus even just still maybe probably
    likely perhaps not never always usually often sometimes mostly currently recently really now
    already do does did is are was were can could will would
    """.split()  # noqa: SIM905 - a word list reads best as text
)
# the part of a quantity "and" adds ("a year and a half"), not an item
_QUANTITY_PARTS = frozenset(("half", "quarter", "dozen", "bit"))
# a list item is a short noun phrase: "a peanut allergy", "her taxes"; longer pieces are clauses
# or appositions ("a second career after the post office")
_ITEM_MAX_WORDS = 4
# a comma joins list items only where the list goes on to "and" / "or" ("pasta, curries and
# stir-fries"); alone it is an apposition or a new clause ("Training for her first 10K, race
# day in March")
_LIST_GOES_ON = re.compile(r"^[^,.;:!?()]*?(?:,\s*)?\b(?:and|or)\s", re.I)


def list_items(claim: str) -> list[str]:
    """The items a claim's lists add after their first ("a dog" in "Has a cat named Pierogi and a
    dog", "milk" in "Is allergic to eggs and milk", "curries" and "stir-fries" in "Cooks pasta,
    curries and stir-fries"): each piece after a comma, "and" or "or" that does not go on with a
    verb (those are predicates: ``claim_predicates``; a plural before "and" is an item, "beans
    and rice"), up to the next phrase word or punctuation."""
    out: list[str] = []
    for m in _LIST_JOIN.finditer(claim):
        after = claim[m.end() :]
        rest = _PUNCTUATION.split(after, maxsplit=1)[0]
        toks = _TOKEN.findall(rest)
        if not toks or not claim[: m.start()].strip() or toks[0].lower() in _NOT_ITEM_START:
            continue
        if not re.search(r"\b(?:and|or)\b", m.group(), re.I) and not _LIST_GOES_ON.match(after):
            continue  # a comma that no "and" / "or" closes
        listed = len(toks) > 1 and toks[1].lower() in ("and", "or")  # "beans and rice"
        if _opens_predicate(rest) and not listed:
            continue
        item: list[str] = []
        for tok in toks:
            if tok.lower() in _ITEM_END:
                break
            item.append(tok)
        # "training for a first 10k": a verb with its object (the claim's "is" left out)
        doing = len(item) == 1 < len(toks) and item[0].lower().endswith("ing")
        amount = {t.lower() for t in item} & _QUANTITY_PARTS
        if item and len(item) <= _ITEM_MAX_WORDS and not doing and not amount:
            out.append(" ".join(item))
    return out


def glued_items(claim: str, unsaid: Iterable[str]) -> list[str]:
    """The ``list_items`` of ``claim`` whose every content word is one of the ``unsaid`` words
    (a hyphenated word: each of its parts, as the aligner reads "stir-fries")."""
    gone = {w.lower() for w in unsaid}
    if not gone:
        return []
    out = []
    for item in list_items(claim):
        own = [t.lower() for t in _TOKEN.findall(item) if t.lower() not in STOPWORDS and len(t) > 1]
        if own and all(w in gone or set(w.split("-")) - {""} <= gone for w in own):
            out.append(item)
    return out


__all__ = [
    "Clause",
    "OtherPersonsFact",
    "claim_people",
    "claim_predicates",
    "clauses",
    "glued_items",
    "known_people",
    "list_items",
    "name_parts",
    "other_persons_fact",
    "others_clauses",
    "said_of_user",
]
