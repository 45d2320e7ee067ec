"""Who a memory belongs to: Mem0's user / agent / run scope, and the tenant of a sidecar key."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict

DEFAULT_TENANT = "default"
# Mem0's vector stores read a filter value of "*" as "any value": as a user_id it would read
# (and delete) every user's memories, so no scope id may be it
WILDCARD = "*"


def refuse_wildcard(name: str, value: str) -> str:
    """``value``, or a ``ValueError`` when it is Mem0's match-any wildcard."""
    if value == WILDCARD:
        raise ValueError(
            f"{name} {WILDCARD!r} is Mem0's match-any wildcard, not an id: refused, so that one id "
            "cannot read or delete every user's memories"
        )
    return value


# URL dot segments: a client's URL handling removes them ("/v2/entities/user/../" is sent as
# "/v2/entities/"), so a user filed under one could never be named in a path to delete it
DOT_SEGMENTS = frozenset({".", ".."})


def refuse_reserved(name: str, value: str) -> str:
    """``value``, or a ``ValueError`` when it is Mem0's wildcard or a URL dot segment: no id."""
    refuse_wildcard(name, value)
    if value in DOT_SEGMENTS:
        raise ValueError(
            f"{name} {value!r} is a URL dot segment, not an id: refused, as a client's URL "
            "handling drops it from a path (what is filed under it could not be deleted by id)"
        )
    return value


class MemoryScope(BaseModel):
    """Who a memory belongs to, as Mem0 scopes it (at least one id)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    def is_empty(self) -> bool:
        return not (self.user_id or self.agent_id or self.run_id)

    def as_kwargs(self) -> dict[str, str]:
        return {k: v for k, v in self.model_dump().items() if v}

    def key(self) -> str:
        """One string per conversation (user, agent, run): turn ids are unique within it."""
        return json.dumps([self.user_id, self.agent_id, self.run_id], separators=(",", ":"))
