"""Fair encoder scheduling: one large request cannot hold everyone else's sentences.

Every request that needs vectors becomes a *job* whose texts are cut into chunks of at most
``chunk`` texts. The encoder runs one forward pass at a time; each pass takes **one chunk from
each waiting job, round-robin** (up to ``max_batch`` texts; jobs that did not fit go first next
time). A small add waits for at most one chunk of a big request, never for all of it, and
concurrent small requests still share a pass (coalescing).

Each job has a budget (``budget_s``) from the moment it queues: a job whose budget runs out
before its last chunk is encoded is dropped from the queue and its caller gets
:class:`~mirage_guard.guard.errors.EncoderBusyError` (retryable, 503): fail closed, the write it
belonged to stores nothing.

:class:`FairQueue` is the ordering alone (no threads, no clock), so it can be tested exactly;
:class:`FairEncoder` runs it: no scheduler thread, the caller that finds the encoder idle runs
the next pass (the others wait on a condition).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from mirage_guard.guard.errors import EncoderBusyError
from mirage_guard.guard.evidence import Vectors

_RECHECK_S = 0.05
# set while a process starts: its own encodes (the linker's attribute prototypes) are not a
# request, and a budget meant for requests waiting on a shared encoder must not stop it from
# starting (a budget of 0.2 s did: "nothing was written, retry later" at start-up)
_UNBUDGETED: ContextVar[bool] = ContextVar("mirage_unbudgeted", default=False)


@contextmanager
def without_budget() -> Iterator[None]:
    """Within the block, this thread's encodes wait as long as they need (start-up only)."""
    token = _UNBUDGETED.set(True)
    try:
        yield
    finally:
        _UNBUDGETED.reset(token)


Encode = Callable[[list[str]], Vectors]
EncodeWithTokens = Callable[[list[str]], tuple[Vectors, list[Any]]]


class EncodeJob:
    """One caller's texts, cut into chunks; filled in pass by pass."""

    def __init__(self, texts: Sequence[str], *, chunk: int, tokens: bool, deadline: float) -> None:
        unique = list(dict.fromkeys(texts))
        self.pending: deque[list[str]] = deque(
            unique[i : i + chunk] for i in range(0, len(unique), chunk)
        )
        self.tokens = tokens
        self.deadline = deadline
        self.vectors: dict[str, Vectors] = {}
        self.token_vectors: dict[str, Any] = {}
        self.error: BaseException | None = None
        self.inflight = 0  # chunks taken by a pass whose vectors are not in yet

    @property
    def done(self) -> bool:
        return not self.pending and not self.inflight


class FairQueue:
    """Round-robin over jobs: each pass serves one chunk of each job, in ring order."""

    def __init__(self, *, max_batch: int) -> None:
        self.max_batch = max_batch
        self._ring: deque[EncodeJob] = deque()

    def __len__(self) -> int:
        return len(self._ring)

    def add(self, job: EncodeJob) -> None:
        if job.pending:
            self._ring.append(job)

    def drop(self, job: EncodeJob) -> None:
        if job in self._ring:
            self._ring.remove(job)
        job.pending.clear()

    def next_batch(self) -> list[tuple[EncodeJob, list[str]]]:
        """The next pass: the head chunk of each job in ring order while it fits in
        ``max_batch`` (the first always does). Served jobs go to the back of the ring; jobs
        that did not fit stay in front of them."""
        batch: list[tuple[EncodeJob, list[str]]] = []
        total = 0
        waiting: deque[EncodeJob] = deque()
        served: list[EncodeJob] = []
        while self._ring:
            job = self._ring.popleft()
            chunk = job.pending[0]
            if batch and total + len(chunk) > self.max_batch:
                waiting.append(job)
                continue
            job.pending.popleft()
            job.inflight += 1
            batch.append((job, chunk))
            total += len(chunk)
            served.append(job)
        waiting.extend(j for j in served if j.pending)
        self._ring = waiting
        return batch


class FairEncoder:
    """Runs encode passes from a :class:`FairQueue` for concurrent callers (thread-safe)."""

    def __init__(
        self,
        encode: Encode,
        encode_with_tokens: EncodeWithTokens | None = None,
        *,
        chunk: int = 32,
        max_batch: int = 128,
        budget_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._encode = encode
        self._encode_with_tokens = encode_with_tokens
        self.chunk = chunk
        self.budget_s = budget_s
        self._clock = clock
        self._queue = FairQueue(max_batch=max(max_batch, chunk))
        self._turn = threading.Condition()
        self._busy = False

    def run(self, texts: Sequence[str], *, tokens: bool = False) -> EncodeJob:
        """Vectors (and token vectors if ``tokens``) of ``texts`` in ``job.vectors``."""
        budget = math.inf if _UNBUDGETED.get() else self.budget_s
        job = EncodeJob(texts, chunk=self.chunk, tokens=tokens, deadline=self._clock() + budget)
        with self._turn:
            self._queue.add(job)
            while not job.done and job.error is None:
                left = job.deadline - self._clock()
                if left <= 0:
                    self._queue.drop(job)
                    raise EncoderBusyError(self.budget_s, len(job.vectors), len(texts))
                if self._busy:
                    self._turn.wait(timeout=min(left, _RECHECK_S))  # the clock may be a fake
                    continue
                self._busy = True
                batch = self._queue.next_batch()
                self._turn.release()
                try:
                    self._pass(batch)
                finally:
                    self._turn.acquire()
                    for served, _ in batch:
                        served.inflight -= 1
                    self._busy = False
                    self._turn.notify_all()
        if job.error is not None:
            raise job.error
        return job

    def _pass(self, batch: list[tuple[EncodeJob, list[str]]]) -> None:
        texts = list(dict.fromkeys(t for _, chunk in batch for t in chunk))
        if not texts:
            return
        with_tokens = self._encode_with_tokens is not None and any(j.tokens for j, _ in batch)
        try:
            if with_tokens:
                assert self._encode_with_tokens is not None
                vecs, toks = self._encode_with_tokens(texts)
            else:
                vecs, toks = self._encode(texts), None
        except BaseException as exc:  # every job in the pass gets the failure
            for job, _ in batch:
                job.error = exc
                self._queue.drop(job)
            if not isinstance(exc, Exception):
                raise
            return
        by_text = dict(zip(texts, vecs, strict=True))
        tok_by_text = dict(zip(texts, toks, strict=True)) if toks is not None else {}
        for job, chunk in batch:
            for t in chunk:
                job.vectors[t] = by_text[t]
                if job.tokens and t in tok_by_text:
                    job.token_vectors[t] = tok_by_text[t]


__all__ = ["EncodeJob", "FairEncoder", "FairQueue"]
