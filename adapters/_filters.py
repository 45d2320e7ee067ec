"""Mem0's filter language, checked before a store reads it, and read again on returned items.

Mem0 2.x takes, beside the scope ids, metadata conditions: an equality (``{"topic": "food"}``),
operators (``eq``, ``ne``, ``gt``, ``gte``, ``lt``, ``lte``, ``in``, ``nin``, ``contains``,
``icontains``) and the logical lists ``AND``, ``OR`` and ``NOT``. A store receives what
:func:`checked_filters` returns, never the caller's filters as they came:

- a top-level ``AND`` is a conjunction, so its conditions join the top level (Mem0 merges an
  ``AND``'s conditions into one dict, and ``AND [{"topic": "a"}, {"topic": "b"}]`` became
  ``topic == "b"``: a key given twice is refused instead), and the scope ids of the Mem0
  platform's form ``{"AND": [{"user_id": "alex"}, ...]}`` become the scope;
- ``OR`` and ``NOT`` hold metadata conditions only: a scope id, the tenant key or ``status``
  inside one is refused (each is the guard's to set, at the top);
- ``AND`` / ``OR`` / ``NOT`` are not nested (not every store reads a nested list);
- a key names metadata (no dot, quote or bracket: embedded Qdrant reads those as a path, and
  ``'"status"'`` reached the status field), with one operator, or range operators together
  (embedded Qdrant reads only the first of ``eq``, ``ne``, ``in``, ``nin``, ``contains``);
- ``"*"`` is refused: embedded Qdrant ignores it, so ``NOT [{"private": "*"}]`` excluded nothing;
- an operator's argument has the type the stores compare: a list of strings or of integers for
  ``in`` / ``nin``, a string for ``contains``, a finite number or an ISO date for ``gt`` ...
  ``lte``, never a float compared for equality (:func:`refuse_float_equality`);
- a filter holds at most :data:`MAX_CONDITIONS` conditions, a list :data:`MAX_LIST_ITEMS` items
  and an ``in`` :data:`MAX_IN_VALUES` values (``LimitExceededError``).

Anything else is an :class:`~mirage_guard.guard.errors.InputError` naming where it is, before
the store is called. :func:`matches` evaluates the same language on an item, for the stores
whose filtering the guard checks again (a remote Mem0 server) and the tenant check.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

from mirage_guard.adapters._backend import SCOPE_KEYS
from mirage_guard.guard.errors import InputError, LimitExceededError

LOGICAL = ("AND", "OR", "NOT")
RANGE_OPERATORS = frozenset({"gt", "gte", "lt", "lte"})
# the operators that compare a metadata value for equality (the range ones take numbers or dates)
EQUALITY_OPERATORS = frozenset({"eq", "ne", "in", "nin"})
TEXT_OPERATORS = frozenset({"contains", "icontains"})
OPERATORS = RANGE_OPERATORS | EQUALITY_OPERATORS | TEXT_OPERATORS
WILDCARD = "*"


def refuse_float_equality(key: str, value: Any) -> None:
    """InputError when filter ``key`` compares a float for equality (``7.5``, ``{"eq": 7.5}``,
    ``{"in": [7.5]}``). Neither store can: embedded Qdrant matches a string, an integer or a
    boolean only (a float is a validation error inside the store), and pgvector compares the
    stored JSON's text with ``str(value)`` (``1e+16`` is not ``10000000000000000``)."""
    if isinstance(value, Mapping):
        compared = [v for op, v in value.items() if op in EQUALITY_OPERATORS]
    else:
        compared = [value]
    flat = [x for v in compared for x in (v if isinstance(v, list | tuple) else [v])]
    if any(isinstance(x, float) for x in flat):
        raise InputError(
            f"filters[{key!r}]: an equality filter takes a string, an integer or a boolean, not "
            "a float (the vector stores cannot match one exactly); filter on an integer or a "
            "string metadata value instead"
        )


def _scalar(value: Any) -> bool:
    return isinstance(value, str | bool | int | float)


# bounds on what one filter may ask (embedded Qdrant reads every condition in Python for every
# memory of the scope: an OR of 15,000 items over 60 memories took 8 s, behind the store's one
# lock, so every tenant waited)
MAX_LIST_ITEMS = 20  # the items of one AND / OR / NOT
MAX_IN_VALUES = 100  # the values of one in / nin
MAX_CONDITIONS = 50  # the metadata conditions of one filter, lists included
LARGEST_INT = 2**53  # a number beyond it is not compared exactly by every store
# a metadata key a filter may name: no dot, quote, bracket or space (embedded Qdrant reads
# those as a path into the payload: '"status"' reached the status field)
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# an ISO 8601 date, with a time to the minute or finer and a zone if any ("20240101" is a
# number to Qdrant, "2024-01-01T10" a validation error inside it)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?)?")


def _number(value: Any) -> bool:
    """A finite number every store compares exactly (not a boolean, NaN, inf or a 400-digit
    integer)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, float):
        return math.isfinite(value) and abs(value) <= LARGEST_INT
    return abs(value) <= LARGEST_INT


def _check_condition(where: str, value: Any) -> None:
    """One metadata key's condition: a scalar or a dict of operators (one operator, or the range
    operators together: embedded Qdrant reads only the first of eq, ne, in, nin, contains)."""
    if isinstance(value, Mapping):
        if not value:
            raise InputError(f"{where}: an empty operator dict matches nothing; give a condition")
        unknown = sorted(str(op) for op in value if op not in OPERATORS)
        if unknown:
            raise InputError(
                f"{where}: unknown filter operator {unknown[0]!r} (supported: "
                f"{', '.join(sorted(OPERATORS))})"
            )
        if len(value) > 1 and not RANGE_OPERATORS.issuperset(value):
            raise InputError(
                f"{where}: one operator per key ({', '.join(sorted(value))} given): the stores "
                "read only one of them; only gt / gte / lt / lte go together"
            )
        for op, arg in value.items():
            _check_argument(f"{where}.{op}", op, arg)
    elif value == WILDCARD:
        raise InputError(
            f"{where}: '*' is not read alike by the stores (embedded Qdrant ignores it, so "
            'NOT [{"key": "*"}] excluded nothing); filter on a value'
        )
    elif not _scalar(value):
        raise InputError(f"{where}: a condition is a string, a number, a boolean or an operator")
    else:
        _check_argument(where, "eq", value)  # an equality, as {"eq": value} is


def _check_argument(where: str, op: str, arg: Any) -> None:
    if op in ("in", "nin"):
        # strings or integers, one kind: a boolean is compared as str(True) by pgvector (the
        # stored JSON has 'true'), and Qdrant refuses a list that mixes kinds
        listed = isinstance(arg, list | tuple) and bool(arg)
        kinds = {str if isinstance(x, str) else int if _number(x) and isinstance(x, int) else None
                 for x in arg} if listed else {None}  # fmt: skip
        if not listed or None in kinds or len(kinds) > 1:
            raise InputError(
                f"{where} takes a non-empty list of strings or of integers, not both (a "
                "boolean: use an equality)"
            )
        if len(arg) > MAX_IN_VALUES:
            raise LimitExceededError(f"filter {op} values", len(arg), MAX_IN_VALUES)
    elif op in TEXT_OPERATORS:
        if not isinstance(arg, str) or not arg.strip():
            raise InputError(f"{where} takes a non-empty string")
    elif op in RANGE_OPERATORS:
        if not _number(arg) and not (isinstance(arg, str) and _DATE.fullmatch(arg)):
            raise InputError(
                f"{where} takes a finite number or an ISO 8601 date (2026-12-01, "
                "2026-12-01T09:30:00Z)"
            )
        if isinstance(arg, str) and _as_datetime(arg) is None:
            raise InputError(f"{where}: {arg!r} is not a date")
    elif not _scalar(arg):
        raise InputError(f"{where} takes a string, a number or a boolean")
    elif isinstance(arg, int | float) and not isinstance(arg, bool) and not _number(arg):
        raise InputError(f"{where}: a number must be finite and at most 2**53 in size")


def _check_metadata(where: str, key: Any, value: Any, guard_keys: Mapping[str, str]) -> None:
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise InputError(
            f"{where}: filter key {key!r} is not a metadata key (letters, digits, '_' and '-', "
            "not starting with a digit: a dot, quote or bracket is a path into the store)"
        )
    if key in guard_keys:
        raise InputError(f"{where}: {guard_keys[key]}")
    refuse_float_equality(key, value)  # first: its message says why a float cannot be matched
    _check_condition(f"{where}[{key!r}]", value)


def checked_filters(
    filters: Mapping[str, Any] | None, guard_keys: Mapping[str, str]
) -> dict[str, Any]:
    """``filters`` in the form a store is given: a top-level ``AND`` joined to the top level,
    every condition checked. ``guard_keys`` maps each key the guard sets itself (the tenant,
    ``status``) to the message that refuses it, wherever it appears. InputError on anything a
    store would misread or refuse."""
    if filters is not None and not isinstance(filters, Mapping):
        raise InputError("filters must be a dict")
    out: dict[str, Any] = {}
    counted = 0

    def put(where: str, key: str, value: Any) -> None:
        nonlocal counted
        if key in LOGICAL:  # every condition of every item (an item may hold many keys)
            counted += sum(len(item) for item in value)
        elif key not in SCOPE_KEYS:
            counted += 1
        if counted > MAX_CONDITIONS:
            raise LimitExceededError("filter conditions", None, MAX_CONDITIONS)
        if key in out:
            if key in SCOPE_KEYS and _trimmed(out[key]) == _trimmed(value):
                return
            old = out[key]
            ops = (old, value)
            if all(isinstance(x, Mapping) for x in ops) and not set(old) & set(value):
                merged = {**old, **value}  # {"gte": 5} and {"lt": 9}: one range
                _check_condition(f"{where}[{key!r}]", merged)
                out[key] = merged
                return
            raise InputError(
                f"{where}: filter key {key!r} is given twice (Mem0 would keep one of the two "
                "conditions); give it once, with every operator it needs"
            )
        out[key] = value

    for key, value in (filters or {}).items():
        if key == "AND":  # a conjunction: its conditions join the top level
            for where, sub_key, sub_value in _conditions(key, value, guard_keys):
                put(where, sub_key, sub_value)
        elif key in LOGICAL:
            list(_conditions(key, value, guard_keys))
            put("filters", key, [dict(item) for item in value])
        else:
            if key not in SCOPE_KEYS:
                _check_metadata("filters", key, value, guard_keys)
            put("filters", key, value)
    return out


def _conditions(
    key: str, value: Any, guard_keys: Mapping[str, str]
) -> Iterator[tuple[str, str, Any]]:
    """The checked conditions of the logical list ``filters[key]``: (where, key, condition)."""
    if not isinstance(value, list) or not value:
        raise InputError(f"filters.{key} takes a non-empty list of conditions")
    if len(value) > MAX_LIST_ITEMS:
        raise LimitExceededError(f"filter {key} items", len(value), MAX_LIST_ITEMS)
    for i, item in enumerate(value):
        where = f"filters.{key}[{i}]"
        if not isinstance(item, Mapping) or not item:
            raise InputError(f"{where} must be a non-empty dict of conditions")
        for sub_key, sub_value in item.items():
            if sub_key in LOGICAL:
                raise InputError(f"{where}: AND / OR / NOT cannot be nested here")
            if sub_key in SCOPE_KEYS:
                if key != "AND":
                    raise InputError(
                        f"{where}: {sub_key} is the scope, not a condition: give it at the "
                        "top of filters (or in a top-level AND)"
                    )
            else:
                _check_metadata(where, sub_key, sub_value, guard_keys)
            yield where, sub_key, sub_value


def _trimmed(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


def _as_datetime(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _ordered(op: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    """A range operator on two numbers, or on two ISO dates (as instants when both carry a
    zone); False for anything else (a missing key, a string against a number)."""

    def compare(value: Any, arg: Any) -> bool:
        left, right = _as_datetime(value), _as_datetime(arg)
        if left is not None and right is not None:
            if (left.tzinfo is None) != (right.tzinfo is None):
                left, right = left.replace(tzinfo=None), right.replace(tzinfo=None)
            return op(left, right)
        numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in (value, arg))
        return numbers and op(value, arg)

    return compare


def _contains(value: Any, arg: Any) -> bool:
    """``contains`` / ``icontains``, read loosely: each word of ``arg`` inside ``value``, case
    ignored. Embedded Qdrant matches whole words case-insensitively (in any order) and pgvector
    a substring; this check passes whatever either store returns, so it never narrows them."""
    if not isinstance(value, str) or not isinstance(arg, str):
        return False
    text = value.casefold()
    return all(word in text for word in re.findall(r"[^\W_]+", arg.casefold()))


_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "in": lambda value, arg: value in arg,
    "nin": lambda value, arg: value not in arg,
    "eq": lambda value, arg: value == arg,
    "ne": lambda value, arg: value != arg,
    "gt": _ordered(lambda a, b: a > b),
    "gte": _ordered(lambda a, b: a >= b),
    "lt": _ordered(lambda a, b: a < b),
    "lte": _ordered(lambda a, b: a <= b),
    "contains": _contains,
    "icontains": _contains,
}


def field_value(item: Mapping[str, Any], key: str) -> Any:
    if key in item:
        return item[key]
    meta = item.get("metadata") or {}
    return meta.get(key) if isinstance(meta, Mapping) else None


def _holds(item: Mapping[str, Any], key: str, cond: Any) -> bool:
    value = field_value(item, key)
    if isinstance(cond, Mapping):
        for op, arg in cond.items():
            if op not in _OPS:
                raise InputError(f"filter operator {op!r} is not supported here")
            if not _OPS[op](value, arg):
                return False
        return True
    return bool(value == cond)


def matches(item: Mapping[str, Any], filters: Mapping[str, Any]) -> bool:
    """Whether ``item`` meets ``filters`` (the language above, as :func:`checked_filters` gives
    it: ``AND`` every item, ``OR`` any, ``NOT`` none).

    Used where a store cannot be trusted to apply a filter (remote servers) and as a final
    fail-closed check before returning items to a caller.
    """
    for key, cond in filters.items():
        if key == "AND":
            if not all(matches(item, sub) for sub in cond):
                return False
        elif key == "OR":
            if not any(matches(item, sub) for sub in cond):
                return False
        elif key == "NOT":
            if any(matches(item, sub) for sub in cond):
                return False
        elif not _holds(item, key, cond):
            return False
    return True


__all__ = [
    "EQUALITY_OPERATORS",
    "OPERATORS",
    "checked_filters",
    "field_value",
    "matches",
    "refuse_float_equality",
]
