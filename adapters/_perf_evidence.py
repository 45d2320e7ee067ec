"""`mirage perf evidence`: guard evidence-path throughput against the raw encoder."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import anyio

from mirage_guard.calibration import Example, group_by_conversation, load_examples
from mirage_guard.guard import Guard
from mirage_guard.guard.evidence import resolve_precision, shared_minilm
from mirage_guard.guard.settings import GuardSettings


@dataclass(frozen=True)
class EvidencePerf:
    encoder_per_s: float
    guard_per_s: float
    cold_guard_per_s: float
    threads: int
    support_precision: str = "fp32"
    support_model: str | None = None  # sha256 of the claim-support model measured

    @property
    def ratio(self) -> float:
        return self.guard_per_s / self.encoder_per_s


def _writes(n: int, batch: int) -> list[list[Example]]:
    """n labelled claims as guarded writes of `batch` claims of one conversation each."""
    groups = list(group_by_conversation(load_examples()).values())
    writes: list[list[Example]] = []
    total = 0
    while total < n:
        for g in groups:
            for i in range(0, len(g), batch):
                chunk = g[i : i + batch][: n - total]
                if chunk:
                    writes.append(chunk)
                    total += len(chunk)
            if total >= n:
                break
    return writes


def measure_evidence(*, n: int, runs: int, batch: int) -> EvidencePerf:
    import torch

    embedder = shared_minilm()
    writes = _writes(n, batch)
    settings = GuardSettings()
    guard = Guard.from_settings(settings, embedder=embedder)

    async def guarded() -> None:
        for w in writes:
            await guard.atag(w[0].turns, [e.candidate for e in w])

    enc_rates: list[float] = []
    guard_rates: list[float] = []
    embedder.encode(["warm up the encoder"])
    for _ in range(runs):
        start = time.perf_counter()
        for w in writes:
            embedder.encode([e.claim.text for e in w])
        enc_rates.append(n / (time.perf_counter() - start))
        start = time.perf_counter()
        anyio.run(guarded)
        guard_rates.append(n / (time.perf_counter() - start))
    guard.close()
    return EvidencePerf(
        encoder_per_s=statistics.median(enc_rates),
        guard_per_s=statistics.median(guard_rates),
        cold_guard_per_s=guard_rates[0],
        threads=torch.get_num_threads(),
        support_precision=resolve_precision(settings.support_precision),
        support_model=guard.linker.support_sha256,
    )
