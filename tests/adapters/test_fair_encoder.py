"""Fair encoder scheduling (issue 9.3): the order of passes is tested exactly on FairQueue, the
threaded FairEncoder with a gated fake encoder and a fake clock (no wall-clock assertion)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from mirage_guard.adapters import GuardedMemory
from mirage_guard.adapters._embedding import CachingEmbedder
from mirage_guard.adapters._fair_encoder import EncodeJob, FairEncoder, FairQueue, without_budget
from mirage_guard.guard import GuardSettings
from mirage_guard.guard.errors import EncoderBusyError
from mirage_guard.guard.evidence import Vectors
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import InMemoryStore


def _job(owner: str, n: int, chunk: int = 2) -> EncodeJob:
    return EncodeJob([f"{owner}{i}" for i in range(n)], chunk=chunk, tokens=False, deadline=1e9)


def _owners(batch: list[tuple[EncodeJob, list[str]]]) -> list[str]:
    return [chunk[0][0] for _, chunk in batch]


def test_a_large_job_advances_one_chunk_per_pass_and_a_small_one_is_served_next_pass() -> None:
    queue = FairQueue(max_batch=4)
    big = _job("B", 20)  # 10 chunks of 2
    queue.add(big)
    assert _owners(queue.next_batch()) == ["B"]  # alone: one chunk, not all twenty texts
    small = _job("s", 1)
    queue.add(small)
    assert _owners(queue.next_batch()) == ["B", "s"]  # the small job waited one pass at most
    assert not small.pending  # its only chunk went in that pass
    passes = 0
    while queue:
        assert _owners(queue.next_batch()) == ["B"]
        passes += 1
    assert passes == 8


def test_round_robin_over_many_jobs_with_a_batch_cap() -> None:
    queue = FairQueue(max_batch=4)  # two chunks of 2 per pass
    a, b, c = _job("a", 4), _job("b", 4), _job("c", 4)
    for j in (a, b, c):
        queue.add(j)
    order = [_owners(queue.next_batch()) for _ in range(3)]
    # c did not fit in the first pass: it goes first in the second, before a's second chunk
    assert order == [["a", "b"], ["c", "a"], ["b", "c"]]
    assert not queue


def test_dropped_job_leaves_the_ring() -> None:
    queue = FairQueue(max_batch=8)
    a, b = _job("a", 6), _job("b", 2)
    queue.add(a)
    queue.add(b)
    queue.drop(a)
    assert _owners(queue.next_batch()) == ["b"]
    assert not queue


class GatedEncoder:
    """Records every pass; the first pass blocks until released."""

    def __init__(self) -> None:
        self.passes: list[list[str]] = []
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, texts: Sequence[str]) -> Vectors:
        self.passes.append(list(texts))
        if len(self.passes) == 1:
            self.entered.set()
            assert self.release.wait(60)
        return np.ones((len(texts), 3), np.float32)


def test_a_small_request_arriving_during_a_large_one_goes_in_the_next_pass() -> None:
    enc = GatedEncoder()
    fair = FairEncoder(enc, chunk=4, max_batch=8)
    big = threading.Thread(target=fair.run, args=([f"big{i}" for i in range(40)],))
    big.start()
    assert enc.entered.wait(60)  # the big request's first chunk is in the encoder
    small_done: list[EncodeJob] = []
    small = threading.Thread(target=lambda: small_done.append(fair.run(["small"])))
    small.start()
    while len(fair._queue) < 2:  # both jobs queued (no sleep-based timing)
        threading.Event().wait(0.001)
    enc.release.set()
    small.join(60)
    big.join(60)
    assert small_done
    assert small_done[0].vectors["small"].shape == (3,)
    assert "small" in enc.passes[1]  # right after the big request's first chunk
    assert len(enc.passes) == 10  # the big request still took all its chunks


def test_a_request_past_its_budget_fails_typed_and_leaves_the_queue() -> None:
    now = [0.0]
    enc = GatedEncoder()
    fair = FairEncoder(enc, chunk=2, max_batch=2, budget_s=5.0, clock=lambda: now[0])
    holder = threading.Thread(target=fair.run, args=(["h0", "h1"],))
    holder.start()
    assert enc.entered.wait(60)
    errors: list[BaseException] = []

    def late() -> None:
        try:
            fair.run(["late"])
        except EncoderBusyError as exc:
            errors.append(exc)

    waiter = threading.Thread(target=late)
    waiter.start()
    while len(fair._queue) < 1:  # queued behind the holder's pass
        threading.Event().wait(0.001)
    now[0] = 10.0  # its budget (5 s of the fake clock) is gone before the encoder is free
    waiter.join(60)
    enc.release.set()
    holder.join(60)
    [err] = errors
    assert isinstance(err, EncoderBusyError)
    assert err.retryable
    assert not fair._queue
    assert all("late" not in p for p in enc.passes)  # never encoded


def test_caching_embedder_chunks_cache_misses_and_keeps_vectors() -> None:
    inner = HashingEmbedder(dimension=16)
    cached = CachingEmbedder(inner, chunk=3)
    texts = [f"sentence {i}" for i in range(10)]
    out = cached.encode(texts)
    assert np.allclose(out, inner.encode(texts))


class GatedEmbedder(HashingEmbedder):
    """A real embedder whose passes are recorded; the first one blocks until released."""

    def __init__(self) -> None:
        super().__init__(dimension=16)
        self.gate = GatedEncoder()

    def encode(self, texts: Sequence[str]) -> Vectors:
        self.gate(texts)
        return super().encode(texts)


def test_the_shared_embedder_does_not_let_a_large_request_hold_a_small_one() -> None:
    inner = GatedEmbedder()
    cached = CachingEmbedder(inner, chunk=8)
    big_texts = [f"long request sentence {i}" for i in range(80)]
    big = threading.Thread(target=cached.encode, args=(big_texts,))
    big.start()
    assert inner.gate.entered.wait(60)
    out: list[Vectors] = []
    small = threading.Thread(target=lambda: out.append(cached.encode(["another tenant's fact"])))
    small.start()
    while len(cached._fair._queue) < 2:
        threading.Event().wait(0.001)
    inner.gate.release.set()
    small.join(60)
    big.join(60)
    passes = inner.gate.passes
    assert len(passes[0]) == 8  # one chunk of the large request, not all 80 sentences
    assert "another tenant's fact" in passes[1]
    assert sum(len(p) for p in passes) == 81
    assert np.allclose(out[0], HashingEmbedder(dimension=16).encode(["another tenant's fact"]))


def test_start_up_encodes_are_not_held_to_a_requests_budget() -> None:
    """A process's own encodes while it starts (the linker's attribute prototypes) are not a
    request: a small MIRAGE_ENCODE_BUDGET_S stopped the sidecar from starting. Each pass here
    takes 1 s of a fake clock against a budget of 0.5 s."""
    now = [0.0]

    def slow(texts: Sequence[str]) -> Vectors:
        now[0] += 1.0
        return np.zeros((len(texts), 3), np.float32)

    fair = FairEncoder(slow, chunk=2, budget_s=0.5, clock=lambda: now[0])
    texts = [f"prototype {i}" for i in range(6)]  # three passes
    with without_budget():
        assert set(fair.run(texts).vectors) == set(texts)
    with pytest.raises(EncoderBusyError, match=r"0\.5 s"):  # a request still is
        fair.run(["a request", "of", "several", "chunks"])


def test_a_guarded_memory_starts_with_a_tiny_budget(tmp_path: Path) -> None:
    settings = GuardSettings(data_dir=tmp_path, encode_budget_s=1e-6, encode_chunk_texts=1)
    memory = GuardedMemory.from_settings(
        settings, embedder=HashingEmbedder(), backend=InMemoryStore()
    )
    memory.close()
