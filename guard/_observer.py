"""What the guard reports while it works, for whoever watches (metrics, tracing, tests).

The core never imports a metrics client: it calls a :class:`GuardObserver`, and the edge
implements it (:class:`mirage_guard.adapters.GuardMetrics` is the Prometheus one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from mirage_guard.guard._domain import Decision

STAGES = ("linker", "audit", "score", "policy", "write", "extract")


@runtime_checkable
class GuardObserver(Protocol):
    """Receives the decisions of each write, per-stage timings and per-stage failures.

    Called synchronously on the write path: implementations must be cheap and must not raise.
    ``stage`` is one of :data:`STAGES`; labels derived from these calls must stay low-cardinality
    (never user ids or texts).
    """

    def on_decisions(self, decisions: Sequence[Decision], *, writer_model: str | None) -> None: ...

    def on_stage(self, stage: str, seconds: float) -> None: ...

    def on_error(self, stage: str, error: BaseException) -> None: ...


class NullObserver:
    """The default: observes nothing."""

    def on_decisions(self, decisions: Sequence[Decision], *, writer_model: str | None) -> None:
        return None

    def on_stage(self, stage: str, seconds: float) -> None:
        return None

    def on_error(self, stage: str, error: BaseException) -> None:
        return None
