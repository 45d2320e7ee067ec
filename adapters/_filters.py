"""Mem0's filter language, checked before a store reads it, and read again on returned items.

Mem0 2.x takes, beside the scope ids, metadata conditions: an equality (``{"topic": "food"}``),
a wildcard (``"*"``: the key is set), operators (``eq``, ``ne``, ``gt``, ``gte``, ``lt``, ``lte``,
``in``, ``nin``, ``contains``, ``icontains``) and the logical lists ``AND``, ``OR`` and ``NOT``.
A store receives what :func:`checked_filters` returns, never the caller's filters as they came:

- a top-level ``AND`` is a conjunction, so its conditions join the top level (Mem0 merges an
  ``AND``'s conditions into one dict, and ``AND [{"topic": "a"}, {"topic": "b"}]`` became
  ``topic == "b"``: a key given twice is refused instead), and the scope ids of the Mem0
  platform's form ``{"AND": [{"user_id": "alex"}, ...]}`` become the scope;
- ``OR`` and ``NOT`` hold metadata conditions only: a scope id, the tenant key or ``status``
  inside one is refused (each is the guard's to set, at the top);
- ``AND`` / ``OR`` / ``NOT`` are not nested (not every store reads a nested list);
- an operator's argument has the type the stores compare: a list for ``in`` / ``nin``, a string
  for ``contains``, a number or an ISO date for ``gt`` ... ``lte``, never a float compared for
  equality (:func:`refuse_float_equality`).

Anything else is an :class:`~mirage_guard.guard.errors.InputError` naming where it is, before
the store is called. :func:`matches` evaluates the same language on an item, for the stores
whose filtering the guard checks again (a remote Mem0 server) and the tenant check.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

from mirage_guard.adapters._backend import SCOPE_KEYS
from mirage_guard.guard.errors import InputError

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


def _check_condition(where: str, value: Any) -> None:
    """One metadata key's condition: a scalar, the wildcard, or a dict of operators."""
    if isinstance(value, Mapping):
        if not value:
            raise InputError(f"{where}: an empty operator dict matches nothing; give a condition")
        unknown = sorted(str(op) for op in value if op not in OPERATORS)
        if unknown:
            raise InputError(
                f"{where}: unknown filter operator {unknown[0]!r} (supported: "
                f"{', '.join(sorted(OPERATORS))})"
            )
        ranged = RANGE_OPERATORS.intersection(value)
        if ranged and len(ranged) != len(value):
            raise InputError(
                f"{where}: the stores cannot combine a range ({', '.join(sorted(ranged))}) with "
                f"{', '.join(sorted(set(value) - ranged))} on one key"
            )
        for op, arg in value.items():
            _check_argument(f"{where}.{op}", op, arg)
    elif not _scalar(value):
        raise InputError(
            f"{where}: a condition is a string, a number, a boolean, '*' or a dict of operators"
        )


def _check_argument(where: str, op: str, arg: Any) -> None:
    if op in ("in", "nin"):
        # not a boolean: pgvector compares str(True), which the stored JSON's 'true' never is
        listed = isinstance(arg, list | tuple) and bool(arg)
        if not listed or not all(_scalar(x) and not isinstance(x, bool) for x in arg):
            raise InputError(
                f"{where} takes a non-empty list of strings or numbers (a boolean: use an equality)"
            )
    elif op in TEXT_OPERATORS:
        if not isinstance(arg, str) or not arg.strip():
            raise InputError(f"{where} takes a non-empty string")
    elif op in RANGE_OPERATORS:
        number = isinstance(arg, int | float) and not isinstance(arg, bool)
        if not number and _as_datetime(arg) is None:
            raise InputError(f"{where} takes a number or an ISO 8601 date")
    elif not _scalar(arg):
        raise InputError(f"{where} takes a string, a number or a boolean")


def _check_metadata(where: str, key: Any, value: Any, guard_keys: Mapping[str, str]) -> None:
    if not isinstance(key, str) or not key:
        raise InputError(f"{where}: a filter key is a non-empty string")
    if key in guard_keys:
        raise InputError(f"{where}: {guard_keys[key]}")
    _check_condition(f"{where}[{key!r}]", value)
    refuse_float_equality(key, value)


def checked_filters(
    filters: Mapping[str, Any] | None, guard_keys: Mapping[str, str]
) -> dict[str, Any]:
    """``filters`` in the form a store is given: a top-level ``AND`` joined to the top level,
    every condition checked. ``guard_keys`` maps each key the guard sets itself (the tenant,
    ``status``) to the message that refuses it, wherever it appears. InputError on anything a
    store would misread or refuse."""
    out: dict[str, Any] = {}

    def put(where: str, key: str, value: Any) -> None:
        if key in out:
            if key in SCOPE_KEYS and out[key] == value:
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


def metadata_keys(filters: Mapping[str, Any]) -> Iterator[str]:
    """Every metadata key a checked filter compares (the scope ids and logical keys left out)."""
    for key, value in filters.items():
        if key in ("OR", "NOT"):
            for item in value:
                yield from (k for k in item if k not in SCOPE_KEYS)
        elif key not in SCOPE_KEYS:
            yield key


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
    if cond == WILDCARD:
        return value is not None
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
    "metadata_keys",
    "refuse_float_equality",
]
