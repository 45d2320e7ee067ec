"""Composition: the parts of a guarded memory built from settings, and who closes them.

``from_settings`` / ``from_config`` are written once, on :class:`BaseGuardedMemory`, so the sync
and async drop-ins take exactly the same arguments. Whatever they build (writer LLM, guard,
store, decision log) is pushed on an :class:`~contextlib.AsyncExitStack` that the async memory
owns and unwinds on ``aclose()``, in reverse order; parts passed in stay the caller's.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Self

from mirage_guard.adapters._backend import MemoryBackend
from mirage_guard.adapters._decision_log import DecisionLog
from mirage_guard.adapters._embedding import CachingEmbedder
from mirage_guard.adapters._fair_encoder import without_budget
from mirage_guard.adapters._loop import EventLoopThread
from mirage_guard.adapters._mem0 import Mem0Backend, _import_mem0
from mirage_guard.adapters._mem0_extraction import Mem0PromptExtractor
from mirage_guard.adapters._prometheus import GuardMetrics
from mirage_guard.adapters._remote import RemoteMem0Backend
from mirage_guard.guard import Guard, LinkerThread
from mirage_guard.guard.errors import ConfigError, MirageError
from mirage_guard.guard.evidence import Embedder, shared_minilm
from mirage_guard.guard.extraction import CandidateExtractor, Extractor
from mirage_guard.guard.llm import LLMClient, RetryingLLM, create_llm
from mirage_guard.guard.scoring import ProfileStore
from mirage_guard.guard.settings import AuditMode, GuardSettings

log = logging.getLogger("mirage.memory")


def _warn_if_slower_than_lease(longest_s: float, s: GuardSettings) -> None:
    """An Idempotency-Key held longer than its lease is taken over by a retry, which removes
    what the first attempt stored while that attempt still runs: say so at start."""
    if longest_s > s.idempotency_lease_s:
        log.warning(
            "a write can wait %.0f s on the writer model (MIRAGE_WRITER_ATTEMPTS=%d x "
            "MIRAGE_WRITER_TIMEOUT_S=%g s, plus back-off), longer than MIRAGE_IDEMPOTENCY_LEASE_S"
            "=%g s: raise the lease or lower the writer's timeout or attempts",
            longest_s, s.writer_attempts, s.writer_timeout_s, s.idempotency_lease_s,
        )  # fmt: skip


class ExtractionMode(StrEnum):
    GUARD = "guard"  # the provenance-aware prompt (prompts/extract_candidates.md)
    MEM0 = "mem0"  # Mem0's own additive extraction prompt; its facts are tagged before insert


def make_extractor(
    writer_llm: LLMClient, extraction: ExtractionMode, settings: GuardSettings
) -> Extractor:
    if extraction is ExtractionMode.MEM0:
        return Mem0PromptExtractor(writer_llm)
    return CandidateExtractor(writer_llm, inline_audit=settings.audit_mode is AuditMode.INLINE)


@dataclass(frozen=True)
class Components:
    """What a guarded memory is made of."""

    backend: MemoryBackend
    guard: Guard
    extractor: Extractor | None
    decision_log: DecisionLog | None
    metrics: GuardMetrics | None
    # how old a pending write intent must be before this memory's first reconciliation takes it
    # for a dead writer's (:func:`reconcile_grace_s`)
    reconcile_grace_s: float = 0.0


def reconcile_grace_s(log: DecisionLog | None, settings: GuardSettings) -> float:
    """How old a pending write intent must be to be taken for a dead writer's: on SQLite the log
    is this process's alone (0); on a database other processes share (sidecar replicas, or
    several app processes with the drop-in), a younger one may be a live write, so only one
    older than the idempotency lease is (at 0, the first write of one process removed the facts
    another was still writing)."""
    if log is None or log.dialect == "sqlite":
        return 0.0
    return settings.idempotency_lease_s


def unwind(resources: AsyncExitStack) -> None:
    """Close what ``resources`` holds from sync code, inside or outside a running event loop."""
    loop = EventLoopThread(name="mirage-unwind")
    try:
        loop.run(resources.aclose())
    finally:
        loop.close()


def compose(
    settings: GuardSettings,
    resources: AsyncExitStack,
    *,
    writer_llm: LLMClient | None = None,
    guard: Guard | None = None,
    backend: MemoryBackend | None = None,
    decision_log: DecisionLog | None = None,
    metrics: GuardMetrics | None = None,
    extraction: ExtractionMode = ExtractionMode.GUARD,
    embedder: Embedder | None = None,
    linker_thread: LinkerThread = "dedicated",
) -> Components:
    """Build the missing parts from ``settings``; each one built is pushed on ``resources``.
    If building one fails, those built before it are closed again."""
    try:
        s = settings
        if writer_llm is None and s.writer_model:
            client = create_llm(
                s.writer_model, api_base=s.writer_api_base, timeout_s=s.writer_timeout_s
            )
            retrying = RetryingLLM(client, attempts=s.writer_attempts)
            resources.push_async_callback(retrying.aclose)
            _warn_if_slower_than_lease(retrying.longest_s(s.writer_timeout_s), s)
            writer_llm = retrying
        auditor_llm: LLMClient | None = None
        if guard is None and s.auditor_model and s.audit_mode is AuditMode.SEPARATE:
            # an independent auditor: its own client, retried like the writer's; the whole
            # audit (retries too) is still bounded by MIRAGE_AUDIT_TIMEOUT_S
            client = create_llm(
                s.auditor_model, api_base=s.auditor_api_base, timeout_s=s.audit_timeout_s
            )
            auditor = RetryingLLM(client, attempts=s.writer_attempts)
            resources.push_async_callback(auditor.aclose)
            auditor_llm = auditor
        # one MiniLM, one encode per text: the store reuses the guard's candidate vectors
        needs_model = guard is None or (backend is None and not s.upstream_url)
        shared = (
            CachingEmbedder(
                embedder or shared_minilm(),
                max_bytes=s.embedding_cache_bytes,
                chunk=s.encode_chunk_texts,
                budget_s=s.encode_budget_s,
            )
            if needs_model
            else None
        )
        if guard is None:
            # start-up, not a request: the linker's prototype encodes are not held to
            # MIRAGE_ENCODE_BUDGET_S (a small one stopped the sidecar from starting)
            with without_budget():
                guard = Guard.from_settings(
                    s,
                    writer_llm=writer_llm,
                    auditor_llm=auditor_llm,
                    embedder=shared,
                    metrics=metrics,
                    linker_thread=linker_thread,
                )
            resources.callback(guard.close)
        if guard.uncalibrated_audit() is not None:  # every write pays for an audit no
            try:  # profile reads: say so at start, with any profile of the model that is there
                store: ProfileStore | None = ProfileStore(s.profile_dir)
            except (MirageError, OSError):
                store = None
            log.warning("%s", guard.uncalibrated_audit(api_base=s.audit_labeller()[1], store=store))
        if s.auditor_model and s.auditor_model == s.writer_model:
            log.warning(
                "MIRAGE_AUDITOR_MODEL is the writer model %r: it audits its own memories, told "
                "another model wrote them (unset MIRAGE_AUDITOR_MODEL for a self-audit)",
                s.writer_model,
            )
        if backend is None:
            backend = (
                RemoteMem0Backend(s.upstream_url)
                if s.upstream_url
                else Mem0Backend.from_settings(s, embedder=shared)
            )
            resources.push_async_callback(backend.aclose)
        if decision_log is None:
            decision_log = DecisionLog.from_settings(s)
            resources.callback(decision_log.close)
        extractor = make_extractor(writer_llm, extraction, s) if writer_llm else None
        return Components(
            backend=backend,
            guard=guard,
            extractor=extractor,
            decision_log=decision_log,
            metrics=metrics,
            reconcile_grace_s=reconcile_grace_s(decision_log, s),
        )
    except BaseException:
        unwind(resources)
        raise


class BaseGuardedMemory(ABC):
    """What the sync and async guarded memories share: how they are built (httpx's BaseClient)."""

    @classmethod
    @abstractmethod
    def _from_components(cls, parts: Components, resources: AsyncExitStack) -> Self:
        """A memory over ``parts`` that closes ``resources`` when it is closed."""

    @classmethod
    def from_settings(
        cls,
        settings: GuardSettings | None = None,
        *,
        writer_llm: LLMClient | None = None,
        guard: Guard | None = None,
        backend: MemoryBackend | None = None,
        decision_log: DecisionLog | None = None,
        metrics: GuardMetrics | None = None,
        extraction: ExtractionMode = ExtractionMode.GUARD,
        embedder: Embedder | None = None,
        linker_thread: LinkerThread = "dedicated",
    ) -> Self:
        """Build everything not passed in from :class:`GuardSettings`; what is built here is
        closed with the memory, what is passed in stays open."""
        resources = AsyncExitStack()
        parts = compose(
            settings or GuardSettings.from_env(),
            resources,
            writer_llm=writer_llm,
            guard=guard,
            backend=backend,
            decision_log=decision_log,
            metrics=metrics,
            extraction=extraction,
            embedder=embedder,
            linker_thread=linker_thread,
        )
        return cls._from_components(parts, resources)

    @classmethod
    def from_config(
        cls,
        config_dict: dict[str, Any],
        *,
        settings: GuardSettings | None = None,
        writer_llm: LLMClient | None = None,
        extraction: ExtractionMode = ExtractionMode.GUARD,
    ) -> Self:
        """Like ``mem0.Memory.from_config``: your own Mem0 configuration (any vector store or
        embedder Mem0 supports) as the store, with the guard in front of it."""
        s = settings or GuardSettings.from_env()
        refuse_ignored_prompts(config_dict)
        if writer_llm is None and not s.writer_model:
            model, api_base = writer_from_mem0_llm(config_dict.get("llm"))
            if model is not None:  # MIRAGE_WRITER_API_BASE, when set, stays
                base = s.writer_api_base or api_base
                s = s.model_copy(update={"writer_model": model, "writer_api_base": base})
        mem0 = _import_mem0(s.data_dir)
        resources = AsyncExitStack()
        backend = Mem0Backend(mem0.Memory.from_config(config_dict))  # the store: closed last
        resources.push_async_callback(backend.aclose)
        parts = compose(s, resources, writer_llm=writer_llm, backend=backend, extraction=extraction)
        return cls._from_components(parts, resources)


# the Mem0 prompt settings the guard's extraction does not apply: each is refused, not ignored
# (an app's "only extract food preferences" was dropped, and every kind of fact stored)
IGNORED_PROMPT_KEYS = ("custom_instructions", "custom_fact_extraction_prompt",
                       "custom_update_memory_prompt", "custom_prompt")  # fmt: skip
# Mem0 LLM providers whose model litellm names "<provider>/<model>"
_LITELLM_PREFIXED = frozenset(
    {"openai", "anthropic", "groq", "together_ai", "deepseek", "gemini", "xai", "ollama"}
)
_MEM0_PROVIDER_ALIASES = {"together": "together_ai"}


def refuse_ignored_prompts(config: Mapping[str, Any]) -> None:
    """ConfigError for a Mem0 prompt customisation the guard would not apply."""
    for key in IGNORED_PROMPT_KEYS:
        if config.get(key):
            raise ConfigError(
                f"{key}: the guard extracts with its own prompt (calibrated per writer model) and "
                "does not apply Mem0's prompt settings; remove it, or keep what the app must not "
                "store out of the messages it sends"
            )


def writer_from_mem0_llm(llm: Any) -> tuple[str | None, str | None]:
    """The writer model (a litellm string) and API base a Mem0 config's ``llm`` block names, or
    (None, None) when it names none. A provider litellm cannot be told of here is a
    ConfigError naming MIRAGE_WRITER_MODEL (never a guess)."""
    if not isinstance(llm, Mapping) or not llm.get("provider"):
        return None, None
    provider = str(llm["provider"])
    config = llm.get("config") or {}
    model = config.get("model") if isinstance(config, Mapping) else None
    if not model:
        return None, None
    provider = _MEM0_PROVIDER_ALIASES.get(provider, provider)
    if isinstance(config, Mapping) and config.get("api_key"):
        raise ConfigError(
            "llm.config.api_key: the guard's writer model reads its key from the environment, "
            "as litellm does (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...): set it there, not in the "
            "Mem0 config"
        )
    # a gateway or self-hosted URL the block names (openai_base_url, ollama_base_url,
    # deepseek_base_url, ...): conversations must go there, never to the vendor's public one
    bases = sorted({str(v) for k, v in config.items() if k.endswith("_base_url") and v})
    if len(bases) > 1:
        raise ConfigError(f"llm.config names {len(bases)} different base URLs: keep one")
    base = bases[0] if bases else None
    if provider == "litellm":
        return str(model), base
    if provider in _LITELLM_PREFIXED:
        return f"{provider}/{model}", base
    if provider == "vllm":
        return f"hosted_vllm/{model}", base
    raise ConfigError(
        f"llm provider {provider!r}: the guard calls its writer model through litellm; set "
        "MIRAGE_WRITER_MODEL (a litellm model string) or pass writer_llm="
    )


__all__ = ["BaseGuardedMemory", "Components", "ExtractionMode", "compose", "make_extractor"]
