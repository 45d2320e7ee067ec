"""The edge: everything that talks to the outside world, around the guard core.

What lives here: memory backends (embedded Mem0, Mem0 REST), the guarded Mem0 drop-ins
(``GuardedMemory`` / ``AsyncGuardedMemory``), the SQL decision log, Prometheus metrics
(``GuardMetrics``, the core's ``GuardObserver``), the sidecar HTTP app (:mod:`.server`), the
``mirage`` CLI (:mod:`.cli`), the memory-pollution report, the demo and the perf commands.

May import: every other package (guard, calibration, benchmark, prompts), FastAPI, SQLAlchemy,
mem0 / qdrant-client (lazily), typer, prometheus-client, httpx. Nothing imports this package but
its own modules and the tests.

>>> from mirage_guard.adapters import GuardedMemory
>>> memory = GuardedMemory.from_settings()          # embedded Mem0 + MiniLM under MIRAGE_DATA_DIR
>>> memory.add([{"role": "user", "content": "I went climbing"}], user_id="alice")
>>> memory.search("hobbies", filters={"user_id": "alice"})             # facts only
>>> memory.get_all(filters={"user_id": "alice"}, include_hypotheses=True)
"""

from mirage_guard.adapters._async_memory import AsyncGuardedMemory
from mirage_guard.adapters._backend import (
    PROTECTED_KEYS,
    PROVENANCE_KEYS,
    TENANT_KEY,
    MemoryBackend,
)
from mirage_guard.adapters._compose import ExtractionMode, make_extractor
from mirage_guard.adapters._decision_log import (
    DecisionLog,
    DecisionQuery,
    KeyClaim,
    LoggedDecision,
    WrittenDecision,
)
from mirage_guard.adapters._filters import matches
from mirage_guard.adapters._mem0 import (
    EMBEDDING_DIMS,
    Mem0Backend,
    embedded_mem0_config,
    pgvector_mem0_config,
)
from mirage_guard.adapters._mem0_extraction import Mem0PromptExtractor
from mirage_guard.adapters._mem0_wire import statuses_for, to_turns
from mirage_guard.adapters._pgserver import LocalPostgres
from mirage_guard.adapters._prometheus import GuardMetrics
from mirage_guard.adapters._remote import RemoteMem0Backend
from mirage_guard.adapters._scope import DEFAULT_TENANT, MemoryScope
from mirage_guard.adapters._sync_memory import GuardedMemory

__all__ = [
    "DEFAULT_TENANT",
    "EMBEDDING_DIMS",
    "PROTECTED_KEYS",
    "PROVENANCE_KEYS",
    "TENANT_KEY",
    "AsyncGuardedMemory",
    "DecisionLog",
    "DecisionQuery",
    "ExtractionMode",
    "GuardMetrics",
    "GuardedMemory",
    "KeyClaim",
    "LocalPostgres",
    "LoggedDecision",
    "Mem0Backend",
    "Mem0PromptExtractor",
    "MemoryBackend",
    "MemoryScope",
    "RemoteMem0Backend",
    "WrittenDecision",
    "embedded_mem0_config",
    "make_extractor",
    "matches",
    "pgvector_mem0_config",
    "statuses_for",
    "to_turns",
]
