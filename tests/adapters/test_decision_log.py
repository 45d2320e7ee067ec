"""DecisionLog: decisions + turns in one transaction, queries, idempotency records."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mirage_guard.adapters._decision_log import (
    DecisionLog,
    DecisionQuery,
    MemoryScope,
    WrittenDecision,
)
from mirage_guard.guard import Action, Decision, Provenance
from mirage_guard.guard._domain import Role, Turn
from mirage_guard.guard.errors import IdempotencyConflictError, InputError
from tests.fakes.decisions import logged_decision


def _decision(text: str, provenance: Provenance, action: Action, turn: str | None) -> Decision:
    return logged_decision(text, provenance, turn, action=action)


@pytest.fixture
def log(tmp_path: Path) -> DecisionLog:
    return DecisionLog(f"sqlite:///{tmp_path / 'nested' / 'log.db'}")


def _record(log: DecisionLog, tenant: str, user: str) -> None:
    log.record(
        tenant=tenant,
        scope=MemoryScope(user_id=user),
        turns=[Turn(id=f"t-{user}", role=Role.USER, content=f"{user} likes tea")],
        written=[
            WrittenDecision(
                decision=_decision("likes tea", Provenance.STATED, Action.STORE, f"t-{user}"),
                memory_id=f"m-{tenant}-{user}",
            ),
            WrittenDecision(
                decision=_decision("is British", Provenance.GENERATED, Action.BLOCK, None)
            ),
        ],
        request_id="r1",
        writer_model="mock/w",
    )


def test_query_filters_by_user_provenance_action_and_time(log: DecisionLog) -> None:
    _record(log, "acme", "alice")
    _record(log, "acme", "bob")
    _record(log, "other", "alice")

    rows = log.query("acme", DecisionQuery(user_id="alice"))
    assert {r.candidate_text for r in rows} == {"likes tea", "is British"}
    (stated,) = log.query("acme", DecisionQuery(user_id="alice", provenance=Provenance.STATED))
    assert stated.source_turn_text == "alice likes tea"
    assert stated.memory_id == "m-acme-alice"
    assert len(log.query("acme", DecisionQuery(action=Action.BLOCK))) == 2
    future = datetime.now(UTC) + timedelta(minutes=1)
    assert log.query("acme", DecisionQuery(since=future)) == []
    assert len(log.query("acme", DecisionQuery(until=future))) == 4
    assert sorted(log.memory_ids("acme")) == ["m-acme-alice", "m-acme-bob"]
    assert log.memory_ids("nobody") == []


def test_turn_ids_are_stable_per_tenant_and_conversation(log: DecisionLog) -> None:
    _record(log, "acme", "alice")
    alice, bob = MemoryScope(user_id="alice"), MemoryScope(user_id="bob")
    turn = log.turn("acme", alice, "t-alice")
    assert turn is not None
    assert turn.content == "alice likes tea"
    assert log.turns("acme", alice) == [turn]
    other = Turn(id="t-alice", role=Role.USER, content="something else")
    with pytest.raises(InputError, match="t-alice"):
        log.check_turns("acme", alice, [other])
    log.check_turns("other-tenant", alice, [other])
    log.check_turns("acme", bob, [other])  # another user's conversation has its own ids
    log.check_turns("acme", MemoryScope(user_id="alice", run_id="r2"), [other])


def test_idempotency_replays_and_refuses_a_different_body(log: DecisionLog) -> None:
    assert log.replay("acme", "k1", "hash-a") is None
    log.save_reply("acme", "k1", "hash-a", {"results": [1]})
    assert log.replay("acme", "k1", "hash-a") == {"results": [1]}
    assert log.replay("other", "k1", "hash-b") is None
    with pytest.raises(IdempotencyConflictError):
        log.replay("acme", "k1", "hash-b")
    with pytest.raises(IdempotencyConflictError):
        log.save_reply("acme", "k1", "hash-a", {"results": [2]})
