"""Which sentences of a user turn can be evidence for a fact about the user.

In a real conversation the user also asks the other party about *their* life ("How long have you
been married?", "You play any instruments?") and remarks on it ("That charity race sounds great,
Mel!"). Those sentences share words with a memory entry about the other person, but they say
nothing about the user; counted as evidence they turn the other person's facts into the user's.
A sentence is kept as evidence unless it is about the other party and not about the speaker:
a question, or a remark addressed to "you" / by name, with no first-person word in it. Requests
that reveal the speaker ("can you help me plan my wedding?") keep their first person and stay.
"""

from __future__ import annotations

import re
from enum import StrEnum

from mirage_guard.guard.evidence._text import DAYS, LETTER, MONTHS

_WORD = re.compile(rf"{LETTER}(?:{LETTER}|')*")
# a letter that is not an ASCII capital: a name is "Mel" or "Zoë", an acronym ("BP", "UBE") is not
_LOWER = r"[^\W\d_A-Z]"
_FIRST = "i i'm i've i'd i'll me my mine myself we we're we've we'd we'll us our ours ourselves"
FIRST_PERSON = frozenset([*_FIRST.split(), "im", "ive", "id"])
_SECOND = "you you're you've you'd you'll your yours yourself yourselves u ur ya ya'll y'all"
SECOND_PERSON = frozenset(_SECOND.split())
# reactions to the other party's news: "Congrats on the new job!", "Sounds like a great trip."
_REACTION = re.compile(
    r"^(?:congrats|congratulations|good luck|happy birthday|happy anniversary|sorry to hear|"
    r"sorry about|that sounds|sounds (?:like|great|fun|amazing|awesome|lovely|rough|hard)|"
    r"how (?:exciting|fun|cool|lovely|awful)|wow|aww?|omg|so happy for|glad (?:to hear|the|that)|"
    r"hope (?:you|the|it|your)|well done|nice one|what a|that looks|"
    r"looks (?:great|fun|amazing|awesome|lovely|beautiful|delicious|gorgeous))\b",
    re.IGNORECASE,
)
# ", Mel!" / ", Mel." / ", Mel?" at the end: a remark ending on the other party's name
_VOCATIVE = re.compile(rf",\s*[A-Z]{_LOWER}+[!?.]*\s*$")
# "Mel, " / "Yes, " / "Glasgow, " at the start: a name, an answer or a word set off, read past it.
# Said first, a name opens the speaker's own news as often as a remark ("Declan, first honey!",
# "Hannah, change of plan"), and a reply opens on its answer ("Glasgow, so not far at all",
# "Dorothy, 9, indoor only"): the rest of the sentence says whether it is about the other party.
_OPENING_WORD = re.compile(rf"^[A-Z]{_LOWER}+,\s+")


# what a new value is said with after "went up to" or "pushed back to": a number, day or month
_NUMBER_WORDS = "one two three four five six seven eight nine ten eleven twelve twenty thirty"
_NEW_VALUE = "|".join((*_NUMBER_WORDS.split(), "forty", "fifty", "hundred", *DAYS, *MONTHS))
# "Actually we moved to Denver", "I quit the bakery last month", "it's three kids now"
_CORRECTION = re.compile(
    r"\b(?:actually|correction|not anymore|no longer|any ?more|used to|turns out|changed my mind|"
    r"instead|scratch that|i meant|fell through|moved to|quit|left my job|"
    # a move, a switch or a transfer of what was said: "I moved the hives to my cousin's farm",
    # "since the switch to Octopus", "switching energy", "she's transferring to Portland State",
    # "my brother sold the plot", "I was appointed principal", "no more QA", "it got cancelled"
    r"moved (?:\w+ ){1,3}to|switch(?:ed|ing)?(?: over)? to|switching (?:\w+ )?(?:energy|jobs?|"
    r"providers?|suppliers?|banks?|schools?)|transferr(?:ed|ing) to|sold (?:the|my|our)|appointed|"
    r"promoted|no more|cancell?ed|called off|"
    r"not (?:any )?more|now|these days|update|rescheduled|postponed|turn(?:ed|s) \d+|"
    # a new value: "rent going up to 925", "went down to three days", "pushed back to March"
    r"(?:(?:gone|going|goes|went|put|pushed|bumped) (?:up|down|back)|dropped|increased|raised|rose|"
    r"reduced|cut|pushed|changed|down) to (?:[£$€]?\d+|" + _NEW_VALUE + r"))\b",
    re.IGNORECASE,
)


def is_correction(sentence: str) -> bool:
    """Whether a sentence reads as a change or correction of something said before."""
    return bool(_CORRECTION.search(sentence))


class SentenceUse(StrEnum):
    """Why a user sentence is or is not evidence about the user."""

    EVIDENCE = "evidence"
    QUESTION_TO_OTHER = "question_to_other"
    REMARK_ABOUT_OTHER = "remark_about_other"


def _words(sentence: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(sentence)]


# chat questions are often typed without "?": an auxiliary and its subject open one ("also is the
# lisboa card worth it or is that a tourist trap", "btw does it get cold there in may"), after a
# filler word. "do" and "have" are left out (they open requests: "do the intro first"), "a"/"an"
# as a subject too, and after "was", "were" or "did" only a pronoun: a chat drops the subject of
# its own news ("Was a great trip", "Was the best day ever", "did the math again", "Is a
# nightmare tbh")
_FILLERS = frozenset("also and so oh btw ok okay but plus anyway hey um".split())  # noqa: SIM905
_AUXILIARIES = frozenset(
    "is are does should would could can will isn't aren't doesn't won't".split()  # noqa: SIM905
)
_PAST = frozenset(("was", "were", "wasn't", "weren't", "did", "didn't"))
_PRONOUNS = frozenset("it there this that he she they you u".split())  # noqa: SIM905
_SUBJECTS = _PRONOUNS | frozenset("the these those your his her their its".split())  # noqa: SIM905
# a question word and its verb open a chat question too ("how's the diabetes stuff going", "when
# are they back", "how come he left"): the question word contracted, or followed by a verb that
# opens a question (the first person, which makes a sentence evidence, is read before)
_WH = frozenset("how what where when who why which".split())  # noqa: SIM905
_WH_VERBS = _AUXILIARIES | _PAST | frozenset(("do", "has", "have", "come"))
_WH_CONTRACTED = frozenset((*(f"{w}'s" for w in _WH), "hows", "whats", "wheres"))


def is_question(sentence: str) -> bool:
    """A question: it ends with "?", or, typed as chat without one, opens (after a filler word)
    on an auxiliary and its subject or on a question word and its verb."""
    s = sentence.strip()
    if s.endswith(("?", "?!")):
        return True
    words = _words(s)
    while words and words[0] in _FILLERS:
        words = words[1:]
    if len(words) < 3:
        return False
    if words[0] in _WH_CONTRACTED or (words[0] in _WH and words[1] in _WH_VERBS):
        return True
    if words[0] in _PAST:
        return words[1] in _PRONOUNS
    return words[0] in _AUXILIARIES and words[1] in _SUBJECTS


def sentence_use(sentence: str) -> SentenceUse:
    """Whether a sentence the *user* said can support a fact about the user."""
    words = set(_words(sentence))
    if words & FIRST_PERSON:
        return SentenceUse.EVIDENCE
    if is_question(sentence):
        return SentenceUse.QUESTION_TO_OTHER
    s = sentence.strip()
    rest = _OPENING_WORD.sub("", s)
    if words & SECOND_PERSON or _VOCATIVE.search(s) or _REACTION.search(rest):
        return SentenceUse.REMARK_ABOUT_OTHER
    return SentenceUse.EVIDENCE


# a sentence that imagines or wishes rather than tells: "if I ever won the lottery I'd buy the
# house on the corner", "I wish I'd studied law", "what if I quit and travelled", "someday I'll
# open a bakery", "in another life I'd be a vet", "my dream is a cabin in Norway"
_HYPOTHETICAL = re.compile(
    r"\bif (?:i|we) (?:ever|were|was|could|won|win|had|only)\b|\b(?:i|we) wish\b|\bwhat if\b"
    r"|\b(?:win|wins|won|winning) (?:the )?lottery\b|\bsometimes (?:i|we) think\b"
    r"|\bif only\b|\bsome ?day\b|\bone day,? (?:i|we)(?:'ll| will| would|'d)\b"
    r"|\bin (?:another|a different|an ideal) (?:life|world)\b"
    r"|\b(?:i|we) (?:dream|fantasi[sz]e) (?:of|about)\b|\bmy dream (?:is|would be|job)\b"
    r"|\bimagine (?:if|me|us|being)\b|\bi'?d love to\b|\bin my dreams\b",
    re.IGNORECASE,
)
# a claim that keeps the wish a wish: "Dreams of running a bookshop", "Would love to live by the
# sea", "Wants to retire early", "Hopes to move to Spain one day"
_WISH_CLAIM = re.compile(
    r"\b(?:dream\w*|wish\w*|would like|would love|'d like|'d love|fantas\w+|imagin\w+|if"
    r"|some ?day|one day|wants?|wanting|hopes?|hoping|hypothetical\w*|considering|thinking)\b",
    re.IGNORECASE,
)


def is_hypothetical(sentence: str) -> bool:
    """The sentence imagines or wishes (a what-if, a wish, a someday), so what it says is no
    fact about the user."""
    return _HYPOTHETICAL.search(sentence) is not None


def keeps_wish(claim: str) -> bool:
    """The claim itself says it is a wish, a want, a hope or a what-if."""
    return _WISH_CLAIM.search(claim) is not None


# what the user reports they were told that is no opinion of them: a having, a need, a must, a
# can, a future ("the derm said I have rosacea", "the vet says I need to", "she said I start on
# Monday", "he said I could", "they told me I got the job"); and the user's own hedges ("I think
# I should")
_NOT_OPINIONS = (
    "have", "has", "had", "need", "needs", "needed", "should", "shall", "can", "could", "will",
    "would", "must", "might", "may", "start", "starts", "got", "get", "qualify", "passed",
    "won", "owe", "think", "guess", "mean", "know", "do", "did", "don't", "didn't", "dont",
    "didnt", "can't", "cant", "won't", "wont", "said", "told", "just", "also", "still",
)  # fmt: skip
# someone else's opinion of the user, reported ("my wife says I'm a terrible cook", "mum thinks
# im lazy", "he calls me a hoarder", "my mother in law says I spoil the children", "Mariana say
# I snore like tractor"): a being or a doing, not a having or a need (``_NOT_OPINIONS``: "the
# derm said I have rosacea" is a diagnosis the user reports as theirs)
_REPORTED = re.compile(
    r"(?<!\bi )(?<!\bi'd )(?<!\bid )\b(?:(?:says|say|said|thinks|think|thought|reckons|reckoned"
    r"|keeps telling me|tells me|told me|claims|insists|jokes)(?: that)?\s+(?:i'?m|i am|i was|im"
    r"|i(?=\s+(?!(?:" + "|".join(_NOT_OPINIONS) + r")\b)[a-z]))|calls me|called me)\b",
    re.IGNORECASE,
)
# where the report ends and the user goes on in their own voice ("... but I make great pasta")
_REPORT_END = re.compile(r"\b(?:but|though|although|and i|so i)\b", re.IGNORECASE)
# the user agreeing with what was said of them ("which is fair", "true", "guilty")
_ENDORSED = re.compile(
    r"\b(?:true|fair|(?:she|he|they)(?:'re|'s| is| are) right|guilty|i admit|not wrong"
    r"|can'?t argue|a point)\b",
    re.IGNORECASE,
)


def reported_opinion(sentence: str) -> tuple[str, str] | None:
    """(what is reported of the user, the rest of the sentence) when the sentence reports
    someone else's opinion of what the user is; None otherwise."""
    m = _REPORTED.search(sentence)
    if m is None:
        return None
    tail = sentence[m.end() :]
    end = _REPORT_END.search(tail)
    said = tail[: end.start()] if end else tail
    rest = sentence[: m.start()] + " " + (tail[end.start() :] if end else "")
    return said, rest


def endorses(text: str) -> bool:
    """The user's turn agrees with what was said of them."""
    return _ENDORSED.search(text) is not None
