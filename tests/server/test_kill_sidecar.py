"""A real kill -9 of `mirage serve` mid-burst: restart, retry the same Idempotency-Keys, and check
the sidecar is still a system of record (issue 9.2).

The sidecar runs as a subprocess on a loopback port with its default embedded stores (Mem0 on
embedded Qdrant, MiniLM) and the decision log at ``database_url`` — a fixture parameter, so the
same shape runs on another database (only SQLite here). Several threads send verbatim adds
(``infer=false``, three user messages each, so one add is three store writes) with
Idempotency-Keys; the process is SIGKILLed after a number of replies, restarted, and every key
is sent again. Then: every memory the store holds has a decision row and every decision row's
memory is there (no orphan stated fact), no text is stored twice, and ``POST /reset`` of the
tenant leaves nothing of it (while another tenant's memory stays).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.serve_process import CLI, ServeProcess

KEYS = "key-a:tenant-a,key-b:tenant-b"
A = {"Authorization": "Token key-a"}
B = {"Authorization": "Token key-b"}
THREADS = 6
ADDS_PER_THREAD = 20
MESSAGES_PER_ADD = 3
KILL_AFTER_REPLIES = 30


@pytest.fixture(params=["sqlite"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    """The decision log's database: None = the default SQLite file in the data dir."""
    return None if request.param == "sqlite" else str(request.param)


@pytest.fixture
def sidecar(tmp_path: Path, database_url: str | None) -> Iterator[ServeProcess]:
    env = {"MIRAGE_API_KEYS": KEYS}
    if database_url:
        env["MIRAGE_DATABASE_URL"] = database_url
    side = ServeProcess(name="serve", data_dir=tmp_path / "data", env=env)
    yield side
    side.stop()


def _body(user: str, n: int) -> dict[str, object]:
    return {
        "messages": [
            {"role": "user", "content": f"{user} note {n} part {m}: I keep item {n * 10 + m}."}
            for m in range(MESSAGES_PER_ADD)
        ],
        "user_id": user,
        "infer": False,
    }


def _burst(sidecar: ServeProcess, replies: list[str]) -> None:
    """THREADS clients, one user each, sending adds; SIGKILL after KILL_AFTER_REPLIES replies."""
    url = sidecar.url
    stop = threading.Event()

    def client(t: int) -> None:
        with httpx.Client(base_url=url, headers=A, timeout=30.0) as http:
            for n in range(ADDS_PER_THREAD):
                if stop.is_set():
                    return
                try:
                    r = http.post("/memories", json=_body(f"u{t}", n),
                                  headers={"Idempotency-Key": f"k-{t}-{n}"})  # fmt: skip
                except httpx.TransportError:
                    return  # killed
                if r.status_code == 200:
                    replies.append(f"k-{t}-{n}")

    threads = [threading.Thread(target=client, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    deadline = time.monotonic() + 300
    while len(replies) < KILL_AFTER_REPLIES and time.monotonic() < deadline:
        if not any(th.is_alive() for th in threads):
            break
        time.sleep(0.005)
    sidecar.kill()  # mid-burst: requests are in flight
    stop.set()
    for th in threads:
        th.join(timeout=60)


Rows = list[dict[str, object]]


def _state(http: httpx.Client, user: str) -> tuple[Rows, Rows]:
    """(memories of any status, decision rows) of one user of the caller's tenant."""
    params = {"user_id": user, "top_k": 1000, "include_hypotheses": True,
              "include_quarantined": True}  # fmt: skip
    items = http.get("/memories", params=params).json()["results"]
    rows = http.get("/v1/decisions", params={"user_id": user, "limit": 1000}).json()["results"]
    return items, rows


@pytest.mark.slow
def test_kill9_mid_burst_leaves_no_orphan_and_retries_do_not_duplicate(
    sidecar: ServeProcess,
) -> None:
    sidecar.start()
    with httpx.Client(base_url=sidecar.url, headers=B, timeout=30.0) as http:
        kept = http.post("/memories", json={**_body("ub", 0), "user_id": "ub"})
        assert kept.status_code == 200, kept.text

    replies: list[str] = []
    _burst(sidecar, replies)
    assert len(replies) >= KILL_AFTER_REPLIES, sidecar.log()
    assert len(replies) < THREADS * ADDS_PER_THREAD, "the burst finished before the kill"

    sidecar.start()  # reconciles what the kill left
    with httpx.Client(base_url=sidecar.url, headers=A, timeout=60.0) as http:
        for t in range(THREADS):  # before any retry: no memory without its decision row
            items, rows = _state(http, f"u{t}")
            orphans = {str(i["id"]) for i in items} - {str(r["memory_id"]) for r in rows}
            assert not orphans, f"u{t}: {len(orphans)} stored memories have no decision row"
        for t in range(THREADS):
            for n in range(ADDS_PER_THREAD):
                r = http.post("/memories", json=_body(f"u{t}", n),
                              headers={"Idempotency-Key": f"k-{t}-{n}"})  # fmt: skip
                assert r.status_code == 200, r.text
        for t in range(THREADS):
            items, rows = _state(http, f"u{t}")
            stored = {str(i["id"]) for i in items}
            logged = {str(r["memory_id"]) for r in rows if r["memory_id"]}
            assert stored == logged, (
                f"u{t}: {len(stored - logged)} stored without a decision row, "
                f"{len(logged - stored)} logged but missing"
            )
            texts = Counter(str(i["memory"]) for i in items)
            assert max(texts.values()) == 1, [t for t, c in texts.items() if c > 1][:3]
            assert len(texts) == ADDS_PER_THREAD * MESSAGES_PER_ADD

        assert http.post("/reset").status_code == 200
        for t in range(THREADS):
            items, _ = _state(http, f"u{t}")
            assert items == []
    with httpx.Client(base_url=sidecar.url, headers=B, timeout=30.0) as http:
        items, _ = _state(http, "ub")
        assert len(items) == MESSAGES_PER_ADD  # another tenant's memories survive the reset

    sidecar.stop()
    doctor = subprocess.run(
        [*CLI, "doctor", "--json"], env=sidecar.process_env(), capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    report = json.loads(doctor.stdout)
    assert report["problems"] == 0
    assert {t["tenant"]: t["memories"] for t in report["tenants"]}["tenant-b"] == MESSAGES_PER_ADD
