"""Two runs of the guard on the same labelled claims, compared claim by claim.

``mirage guard eval`` / ``eval-suite --per-claim FILE`` write one row per claim (:class:`ClaimRow`).
Two such files, from the guard before and after a change (a new release, a refitted profile,
another support model), say more than two tables of figures: which claims moved, whether they
moved to their label or away from it, and whether that is more than the noise of a few rows.
A change that moves 8 claims to the label and 4 away is +4 claims, which an exact McNemar test
(the discordant claims, binomial at one half) reads as p = 0.39: no evidence of a gain.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel
from scipy.stats import binomtest

from mirage_guard.calibration._data import read_models
from mirage_guard.calibration._eval import ClaimRow, confusion_matrix, stored_as_fact
from mirage_guard.guard import Provenance
from mirage_guard.guard.errors import InputError

ALL = "all"
_PROVENANCES = tuple(p.value for p in Provenance)
_Key = tuple[str, str]  # (set, claim_id)


def load_claim_rows(path: Path) -> dict[_Key, ClaimRow]:
    """The rows of a ``--per-claim`` file by (set, claim id); an :class:`InputError` naming the
    file and line for a row that is not one (a provenance that is none of the guard's three
    included), or a claim given twice in a set."""
    out: dict[_Key, ClaimRow] = {}
    for n, row in read_models(path, ClaimRow, what="a --per-claim row"):
        for field in ("expected", "provenance"):
            value = getattr(row, field)
            if value not in _PROVENANCES:
                raise InputError(
                    f"{path}:{n}: not a --per-claim row ({field}: {value!r} is not one of "
                    f"{', '.join(_PROVENANCES)})"
                )
        key = (row.set, row.claim_id)
        if key in out:
            raise InputError(f"{path}:{n}: claim {row.claim_id!r} of set {row.set!r} twice")
        out[key] = row
    if not out:
        raise InputError(f"{path}: no claims (a file of `mirage guard eval --per-claim`)")
    return out


class MovedClaim(BaseModel):
    """A claim whose provenance differs between the two runs."""

    set: str
    claim_id: str
    text: str
    expected: str
    before: str
    after: str


class GroupDiff(BaseModel):
    """One set, or a group of sets, in both runs."""

    name: str
    kind: Literal["set", "group", "all"]
    sets: list[str]
    n: int
    accuracy_before: float  # 3-way
    accuracy_after: float
    moved: int  # claims with another provenance after
    to_label: int  # ... that the second run gets right and the first did not
    away: int  # ... and the reverse
    # exact McNemar test on the claims one run gets right and the other wrong (two-sided)
    p_value: float
    generated_as_stated_before: int
    generated_as_stated_after: int
    source_turn_hits_before: int  # stated and inferred claims linked to their labelled turn
    source_turn_hits_after: int
    source_turn_n: int


class ClaimDiff(BaseModel):
    """The comparison of two ``--per-claim`` files."""

    before: str
    after: str
    groups: list[GroupDiff]
    only_before: int  # claims in one file only: not compared
    only_after: int
    moved: list[MovedClaim]


def _group(
    name: str,
    kind: Literal["set", "group", "all"],
    sets: Sequence[str],
    keys: Sequence[_Key],
    a: Mapping[_Key, ClaimRow],
    b: Mapping[_Key, ClaimRow],
) -> GroupDiff:
    right_a = [a[k].correct for k in keys]
    right_b = [b[k].correct for k in keys]
    to = sum(1 for x, y in zip(right_a, right_b, strict=True) if y and not x)
    away = sum(1 for x, y in zip(right_a, right_b, strict=True) if x and not y)

    def leaked(rows: Mapping[_Key, ClaimRow]) -> int:
        gold, pred = [rows[k].expected for k in keys], [rows[k].provenance for k in keys]
        return stored_as_fact(confusion_matrix(gold, pred))[0]

    def hits(rows: Mapping[_Key, ClaimRow]) -> int:
        return sum(1 for k in keys if rows[k].source_turn_correct)

    n = len(keys)
    return GroupDiff(
        name=name,
        kind=kind,
        sets=list(sets),
        n=n,
        accuracy_before=sum(right_a) / n,
        accuracy_after=sum(right_b) / n,
        moved=sum(1 for k in keys if a[k].provenance != b[k].provenance),
        to_label=to,
        away=away,
        p_value=float(binomtest(to, to + away, 0.5).pvalue) if to + away else 1.0,
        generated_as_stated_before=leaked(a),
        generated_as_stated_after=leaked(b),
        source_turn_hits_before=hits(a),
        source_turn_hits_after=hits(b),
        source_turn_n=sum(1 for k in keys if a[k].source_turn_correct is not None),
    )


def diff_runs(
    before: Mapping[_Key, ClaimRow],
    after: Mapping[_Key, ClaimRow],
    *,
    groups: Mapping[str, Sequence[str]] | None = None,
    names: tuple[str, str] = ("before", "after"),
    moved_in: Sequence[str] = (),
) -> ClaimDiff:
    """A row per set (in the order of ``before``), then one per group of ``groups`` (name ->
    sets), then ``all``. Only claims in both runs are compared, and they must carry the same
    label in both (the same data scored twice). ``moved_in``: sets or groups whose moved claims
    are listed (none given: every set's); the figures are unchanged, so a set kept unread can
    be counted without a single claim of it printed."""
    common = [k for k in before if k in after]
    if not common:
        raise InputError(f"{names[0]} and {names[1]} share no claim: not runs on the same data")
    relabelled = [k for k in common if before[k].expected != after[k].expected]
    if relabelled:
        s, c = relabelled[0]
        raise InputError(
            f"{len(relabelled)} claims carry another label in {names[1]} (first: {c!r} of set "
            f"{s!r}): compare runs on the same labelled data"
        )
    by_set: dict[str, list[_Key]] = {}
    for k in common:
        by_set.setdefault(k[0], []).append(k)
    rows = [_group(s, "set", [s], keys, before, after) for s, keys in by_set.items()]
    for name, sets in (groups or {}).items():
        unknown = [s for s in sets if s not in by_set]
        if unknown:
            raise InputError(
                f"group {name!r}: no compared claims of set {unknown[0]!r} (sets: "
                f"{', '.join(by_set)})"
            )
        keys = [k for s in sets for k in by_set[s]]
        rows.append(_group(name, "group", sets, keys, before, after))
    rows.append(_group(ALL, "all", list(by_set), common, before, after))
    listed = _listed_sets(moved_in, by_set, groups or {})
    moved = [
        MovedClaim(
            set=k[0],
            claim_id=k[1],
            text=after[k].text,
            expected=after[k].expected,
            before=before[k].provenance,
            after=after[k].provenance,
        )
        for k in common
        if before[k].provenance != after[k].provenance and (listed is None or k[0] in listed)
    ]
    return ClaimDiff(
        before=names[0],
        after=names[1],
        groups=rows,
        only_before=sum(1 for k in before if k not in after),
        only_after=sum(1 for k in after if k not in before),
        moved=moved,
    )


def _listed_sets(
    names: Sequence[str], by_set: Mapping[str, object], groups: Mapping[str, Sequence[str]]
) -> set[str] | None:
    """The sets ``names`` (sets or groups) stand for; None when no name is given (every set)."""
    if not names:
        return None
    out: set[str] = set()
    for name in names:
        if name in groups:
            out.update(groups[name])
        elif name in by_set:
            out.add(name)
        else:
            raise InputError(
                f"--moved-in {name!r}: neither a compared set nor a --group (sets: "
                f"{', '.join(by_set)})"
            )
    return out


def parse_groups(specs: Iterable[str]) -> dict[str, list[str]]:
    """``NAME=SET[,SET...]`` options as name -> sets (an :class:`InputError` for a bad one)."""
    out: dict[str, list[str]] = {}
    for spec in specs:
        raw, sep, rest = spec.partition("=")
        name, sets = raw.strip(), [s.strip() for s in rest.split(",") if s.strip()]
        if not sep or not name or not sets:
            raise InputError(f"--group {spec!r}: expected NAME=SET[,SET...]")
        if name in out or name == ALL:
            raise InputError(f"--group {spec!r}: the name {name!r} is taken")
        out[name] = sets
    return out


def run_diff(
    before: Path, after: Path, groups: Iterable[str] = (), moved_in: Sequence[str] = ()
) -> ClaimDiff:
    """:func:`diff_runs` of two ``--per-claim`` files."""
    return diff_runs(
        load_claim_rows(before),
        load_claim_rows(after),
        groups=parse_groups(groups),
        names=(str(before), str(after)),
        moved_in=moved_in,
    )
