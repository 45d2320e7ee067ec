"""Progress of a run: rich bars per stage in a terminal, nothing in tests."""

from __future__ import annotations

from typing import Protocol

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from mirage_guard.benchmark._config import Stage


class ProgressSink(Protocol):
    def start(self, totals: dict[Stage, int]) -> None: ...

    def advance(self, stage: Stage) -> None: ...

    def stop(self) -> None: ...


class NullProgress:
    def __init__(self) -> None:
        self.counts: dict[Stage, int] = {}

    def start(self, totals: dict[Stage, int]) -> None:
        self.counts = dict.fromkeys(totals, 0)

    def advance(self, stage: Stage) -> None:
        self.counts[stage] = self.counts.get(stage, 0) + 1

    def stop(self) -> None:
        return None


class RichProgress:
    """One bar per stage; resumed units count as done."""

    def __init__(self) -> None:
        self._progress = Progress(
            TextColumn("{task.description:<11}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        )
        self._tasks: dict[Stage, TaskID] = {}

    def start(self, totals: dict[Stage, int]) -> None:
        for stage, total in totals.items():
            self._tasks[stage] = self._progress.add_task(stage.value, total=total)
        self._progress.start()

    def advance(self, stage: Stage) -> None:
        if stage in self._tasks:
            self._progress.advance(self._tasks[stage])

    def stop(self) -> None:
        self._progress.stop()
