"""Network fakes: loopback servers that misbehave the way model servers do."""

from __future__ import annotations

import socket
import threading


class SilentServer:
    """A TCP server that accepts connections and never answers: a model server that hangs."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.conns: list[socket.socket] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            self.conns.append(conn)  # held open, never read from or answered

    def close(self) -> None:
        self._stop.set()
        self.thread.join()
        for conn in self.conns:
            conn.close()
        self.sock.close()
