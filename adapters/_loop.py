"""The event-loop bridge of the sync facade: one asyncio loop on a daemon thread.

``GuardedMemory`` runs each call of its async twin on this loop and waits for the result, so it
works the same from plain code and from inside a running event loop (a notebook, a FastAPI
handler), where ``asyncio.run`` would refuse.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable
from typing import TypeVar

from mirage_guard.guard.errors import ClosedError

T = TypeVar("T")


class EventLoopThread:
    """An event loop on its own daemon thread; :meth:`run` blocks until a coroutine is done."""

    def __init__(self, name: str = "mirage-guarded-memory") -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, awaitable: Awaitable[T]) -> T:
        if self._loop.is_closed():
            if inspect.iscoroutine(awaitable):
                awaitable.close()  # never run: no "coroutine was never awaited" warning
            raise ClosedError()

        async def wrap() -> T:
            return await awaitable

        return asyncio.run_coroutine_threadsafe(wrap(), self._loop).result()

    @property
    def closed(self) -> bool:
        return self._loop.is_closed()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


__all__ = ["EventLoopThread"]
