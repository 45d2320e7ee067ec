"""Memory stores behind the guard: Mem0 in-process or remote, and the guarded Mem0 drop-ins.

>>> from adapters import GuardedMemory
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
    matches,
)
from mirage_guard.adapters._compose import ExtractionMode, make_extractor
from mirage_guard.adapters._mem0 import EMBEDDING_DIMS, Mem0Backend, embedded_mem0_config
from mirage_guard.adapters._mem0_extraction import Mem0PromptExtractor
from mirage_guard.adapters._mem0_wire import statuses_for, to_turns
from mirage_guard.adapters._prometheus import GuardMetrics
from mirage_guard.adapters._remote import RemoteMem0Backend
from mirage_guard.adapters._scope import MemoryScope
from mirage_guard.adapters._sync_memory import GuardedMemory

__all__ = [
    "EMBEDDING_DIMS",
    "PROTECTED_KEYS",
    "PROVENANCE_KEYS",
    "TENANT_KEY",
    "AsyncGuardedMemory",
    "ExtractionMode",
    "GuardMetrics",
    "GuardedMemory",
    "Mem0Backend",
    "Mem0PromptExtractor",
    "MemoryBackend",
    "MemoryScope",
    "RemoteMem0Backend",
    "embedded_mem0_config",
    "make_extractor",
    "matches",
    "statuses_for",
    "to_turns",
]
