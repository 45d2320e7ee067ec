"""Two `mirage serve` replicas sharing one PostgreSQL + pgvector (issue 9, beyond one machine).

Both replicas are real subprocesses on loopback ports with the settings a deployment uses:
``MIRAGE_DATABASE_URL`` (decision log, idempotency keys, turns) and ``MIRAGE_VECTOR_STORE_URL``
(Mem0 on pgvector) pointing at the session's PostgreSQL server (``tests/postgres.py``), each
with its own data directory. Checked: concurrent writes to both are all readable from either,
an Idempotency-Key sent to A then B (or to both at once) writes once, and no tenant reads
another's memory through either replica.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.server.serve_process import ServeProcess

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

KEYS = "key-a:tenant-a,key-b:tenant-b"
TENANT_A = {"Authorization": "Token key-a"}
TENANT_B = {"Authorization": "Token key-b"}
LEASE_S = 4.0  # an idempotency claim of a killed replica is taken over after this


def shared_env(database_url: str) -> dict[str, str]:
    return {
        "MIRAGE_API_KEYS": KEYS,
        "MIRAGE_DATABASE_URL": database_url,
        "MIRAGE_VECTOR_STORE_URL": database_url,
        "MIRAGE_IDEMPOTENCY_LEASE_S": str(LEASE_S),
        "MIRAGE_IDEMPOTENCY_WAIT_S": "30",
    }


def start_replicas(root: Path, database_url: str, n: int = 2) -> list[ServeProcess]:
    replicas = [
        ServeProcess(
            name=f"replica-{i}", data_dir=root / f"replica-{i}", env=shared_env(database_url)
        )
        for i in range(n)
    ]
    for r in replicas:  # launched together: they create the shared schema at the same time
        r.launch()
    for r in replicas:
        r.wait_ready()
    return replicas


@pytest.fixture(scope="module")
def replicas(
    postgres_server: object, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[ServeProcess]]:
    from mirage_guard.adapters import LocalPostgres

    assert isinstance(postgres_server, LocalPostgres)
    url = postgres_server.create_database("replicas")
    pair = start_replicas(tmp_path_factory.mktemp("replicas"), url)
    yield pair
    for r in pair:
        r.stop()


def body(user: str, n: int, parts: int = 2) -> dict[str, object]:
    return {
        "messages": [
            {"role": "user", "content": f"{user} note {n} part {m}: I keep item {n * 10 + m}."}
            for m in range(parts)
        ],
        "user_id": user,
        "infer": False,
    }


def state(http: httpx.Client, user: str) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    items = http.get("/memories", params={"user_id": user, "top_k": 1000,
                                          "include_hypotheses": True,
                                          "include_quarantined": True})  # fmt: skip
    rows = http.get("/v1/decisions", params={"user_id": user, "limit": 1000})
    assert items.status_code == rows.status_code == 200, (items.text, rows.text)
    return items.json()["results"], rows.json()["results"]


def test_concurrent_writes_to_both_replicas_are_read_from_either(
    replicas: list[ServeProcess],
) -> None:
    users, adds = 4, 6

    def client(u: int) -> int:
        ok = 0
        for n in range(adds):
            target = replicas[(u + n) % 2]  # every user writes through both replicas
            with httpx.Client(base_url=target.url, headers=TENANT_A, timeout=60.0) as http:
                r = http.post("/memories", json=body(f"cw{u}", n))
            assert r.status_code == 200, r.text
            ok += len(r.json()["results"])
        return ok

    with ThreadPoolExecutor(users) as pool:
        written = sum(pool.map(client, range(users)))
    assert written == users * adds * 2
    views = []
    for replica in replicas:
        with httpx.Client(base_url=replica.url, headers=TENANT_A, timeout=60.0) as http:
            view = {}
            for u in range(users):
                items, rows = state(http, f"cw{u}")
                stored = {str(i["id"]) for i in items}
                logged = {str(r["memory_id"]) for r in rows if r["memory_id"]}
                assert stored == logged
                assert len(stored) == adds * 2
                assert max(Counter(str(i["memory"]) for i in items).values()) == 1
                view[u] = stored
            # search reaches what either replica wrote (pgvector is the one store)
            found = http.post(
                "/search", json={"query": "I keep an item", "user_id": "cw1", "top_k": 100}
            )
            assert found.status_code == 200, found.text
            assert {str(i["id"]) for i in found.json()["results"]} == view[1]
            views.append(view)
    assert views[0] == views[1]


def test_an_idempotency_key_sent_to_a_then_b_writes_once(replicas: list[ServeProcess]) -> None:
    a, b = replicas
    key = {"Idempotency-Key": "across-1"}
    with httpx.Client(headers={**TENANT_A, **key}, timeout=60.0) as http:
        first = http.post(f"{a.url}/memories", json=body("idem", 1))
        again = http.post(f"{b.url}/memories", json=body("idem", 1))
        other = http.post(f"{b.url}/memories", json=body("idem", 2))
    assert first.status_code == again.status_code == 200, (first.text, again.text)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert (other.status_code, other.json()["error"]["type"]) == (409, "idempotency_conflict")
    with httpx.Client(base_url=b.url, headers=TENANT_A, timeout=60.0) as http:
        items, rows = state(http, "idem")
        # Mem0's change history is shared too: B lists what was written through A
        written_on_a = first.json()["results"][0]["id"]
        history = http.get(f"/memories/{written_on_a}/history")
    assert len(items) == 2
    assert len([r for r in rows if r["memory_id"]]) == 2
    assert history.status_code == 200, history.text
    assert [e["event"] for e in history.json()] == ["ADD"]


def test_one_key_sent_to_both_replicas_at_once_writes_once(replicas: list[ServeProcess]) -> None:
    start = threading.Barrier(6)

    def send(i: int) -> httpx.Response:
        target = replicas[i % 2]
        with httpx.Client(base_url=target.url, headers=TENANT_A, timeout=60.0) as http:
            start.wait()
            return http.post(
                "/memories", json=body("race", 7), headers={"Idempotency-Key": "race-7"}
            )

    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(send, range(6)))
    assert [r.status_code for r in answers] == [200] * 6, [r.text for r in answers]
    assert len({r.text for r in answers}) == 1  # every caller got the one write's answer
    assert sum(r.headers.get("Idempotent-Replayed") != "true" for r in answers) == 1
    with httpx.Client(base_url=replicas[1].url, headers=TENANT_A, timeout=60.0) as http:
        items, _ = state(http, "race")
    assert len(items) == 2


def test_no_tenant_reads_another_tenants_memory_through_any_replica(
    replicas: list[ServeProcess],
) -> None:
    a, b = replicas
    with httpx.Client(base_url=a.url, headers=TENANT_A, timeout=60.0) as http:
        written = http.post("/memories", json=body("shared-user", 1))
    assert written.status_code == 200, written.text
    memory_id = written.json()["results"][0]["id"]
    for replica in (a, b):
        with httpx.Client(base_url=replica.url, headers=TENANT_B, timeout=60.0) as http:
            assert http.get(f"/memories/{memory_id}").status_code == 404
            items, rows = state(http, "shared-user")
            assert (items, rows) == ([], [])
            found = http.post(
                "/search", json={"query": "shared-user note 1", "user_id": "shared-user"}
            )
            assert found.status_code == 200
            assert found.json()["results"] == []
            assert http.delete(f"/memories/{memory_id}").status_code == 404
    with httpx.Client(base_url=b.url, headers=TENANT_A, timeout=60.0) as http:
        assert http.get(f"/memories/{memory_id}").status_code == 200


def test_the_same_fact_sent_to_both_replicas_at_once_is_stored_once(
    replicas: list[ServeProcess],
) -> None:
    """A client that times out on replica A and retries on B without an Idempotency-Key (or
    sends one conversation to both) had each replica look for the fact, find none and store it:
    two copies. The scope's advisory lock makes the second replica wait for the first's
    decision rows, find the fact, and store nothing."""
    a, b = replicas
    users = [f"twice-{i}" for i in range(8)]

    def send(replica: ServeProcess, user: str, start: threading.Barrier) -> int:
        one = {"messages": [{"role": "user", "content": f"I keep bees in {user}."}],
               "user_id": user, "infer": False}  # fmt: skip
        with httpx.Client(base_url=replica.url, headers=TENANT_A, timeout=60.0) as http:
            start.wait()
            r = http.post("/memories", json=one)
        assert r.status_code == 200, r.text
        return len(r.json()["results"])

    for user in users:
        start = threading.Barrier(2)
        with ThreadPoolExecutor(2) as pool:
            sent = [pool.submit(send, rep, user, start) for rep in (a, b)]
            stored = [f.result() for f in sent]
        assert sorted(stored) == [0, 1], (user, stored)  # one stored it, the other found it
    with httpx.Client(base_url=b.url, headers=TENANT_A, timeout=60.0) as http:
        for user in users:
            items, rows = state(http, user)
            assert len(items) == 1, (user, items)
            assert [r["memory_id"] for r in rows] == [items[0]["id"]] * 2  # both name it


def test_mem0s_filter_language_on_pgvector(replicas: list[ServeProcess]) -> None:
    """Operators, OR and NOT through the sidecar on Mem0's pgvector store, as on embedded
    Qdrant (tests/server/test_mem0_client.py): both stores read what the guard passes."""
    a, b = replicas
    with httpx.Client(base_url=a.url, headers=TENANT_A, timeout=60.0) as http:
        for text, meta in [
            ("I like green tea.", {"topic": "food", "n": 1}),
            ("I have a dog named Rex.", {"topic": "pets", "n": 5}),
            ("I live in Porto.", {"topic": "place", "n": 9}),
        ]:
            one = {"messages": [{"role": "user", "content": text}], "user_id": "filtering",
                   "metadata": meta, "infer": False}  # fmt: skip
            assert http.post("/memories", json=one).status_code == 200
    with httpx.Client(base_url=b.url, headers=TENANT_A, timeout=60.0) as http:

        def listed(filters: dict[str, object]) -> list[str]:
            r = http.post("/v3/memories/", json={"filters": filters})
            assert r.status_code == 200, r.text
            return sorted(m["memory"] for m in r.json()["results"])

        assert listed({"AND": [{"user_id": "filtering"}, {"n": {"gte": 5}}]}) == [
            "I have a dog named Rex.",
            "I live in Porto.",
        ]
        either = {"user_id": "filtering", "OR": [{"topic": "food"}, {"n": {"gt": 8}}]}
        assert listed(either) == ["I like green tea.", "I live in Porto."]
        neither = {"user_id": "filtering", "NOT": [{"topic": {"in": ["food", "pets"]}}]}
        assert listed(neither) == ["I live in Porto."]
        assert listed({"user_id": "filtering", "topic": {"contains": "pet"}}) == [
            "I have a dog named Rex."
        ]
        # pgvector compares a range as numbers: a date is refused, not read as a number
        dated = {"user_id": "filtering", "created_at": {"gte": "2026-01-01T00:00:00Z"}}
        r = http.post("/v3/memories/", json={"filters": dated})
        assert r.status_code == 400, r.text
        found = http.post("/search", json={"query": "home", "user_id": "filtering",
                                           "filters": either, "threshold": 0.0})  # fmt: skip
        assert found.status_code == 200, found.text
        assert sorted(m["memory"] for m in found.json()["results"]) == listed(either)


# --- kill -9 of one replica mid-burst (last: it kills and restarts replica A) ----------------

THREADS = 6
ADDS_PER_THREAD = 12
MESSAGES_PER_ADD = 3
KILL_AFTER_REPLIES = 20


def _burst(replicas: list[ServeProcess], replies: list[str]) -> None:
    """THREADS clients alternate between the replicas, sending adds with Idempotency-Keys;
    replica A is SIGKILLed after KILL_AFTER_REPLIES replies, with requests in flight on it."""
    stop = threading.Event()

    def client(t: int) -> None:
        for n in range(ADDS_PER_THREAD):
            if stop.is_set():
                return
            target = replicas[(t + n) % 2]
            try:
                with httpx.Client(base_url=target.url, headers=TENANT_A, timeout=60.0) as http:
                    r = http.post("/memories", json=body(f"k9u{t}", n, MESSAGES_PER_ADD),
                                  headers={"Idempotency-Key": f"k9-{t}-{n}"})  # fmt: skip
            except httpx.TransportError:
                return  # replica A was killed under this request
            if r.status_code == 200:
                replies.append(f"k9-{t}-{n}")

    threads = [threading.Thread(target=client, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    deadline = time.monotonic() + 300
    while len(replies) < KILL_AFTER_REPLIES and time.monotonic() < deadline:
        if not any(th.is_alive() for th in threads):
            break
        time.sleep(0.005)
    replicas[0].kill()
    stop.set()
    for th in threads:
        th.join(timeout=120)


def _assert_consistent(http: httpx.Client) -> None:
    for t in range(THREADS):
        items, rows = state(http, f"k9u{t}")
        stored = {str(i["id"]) for i in items}
        logged = {str(r["memory_id"]) for r in rows if r["memory_id"]}
        assert stored == logged, (
            f"k9u{t}: {len(stored - logged)} stored without a decision row, "
            f"{len(logged - stored)} logged but missing"
        )
        texts = Counter(str(i["memory"]) for i in items)
        assert max(texts.values()) == 1, [x for x, c in texts.items() if c > 1][:3]
        assert len(texts) == ADDS_PER_THREAD * MESSAGES_PER_ADD


def test_kill9_of_one_replica_mid_burst_leaves_no_orphan_and_no_duplicate(
    replicas: list[ServeProcess],
) -> None:
    a, b = replicas
    with httpx.Client(base_url=a.url, headers=TENANT_B, timeout=60.0) as http:
        kept = http.post("/memories", json=body("k9-other", 0, MESSAGES_PER_ADD))
    assert kept.status_code == 200, kept.text

    replies: list[str] = []
    _burst(replicas, replies)
    assert len(replies) >= KILL_AFTER_REPLIES, a.log()
    assert len(replies) < THREADS * ADDS_PER_THREAD, "the burst finished before the kill"

    # every key again, all on the surviving replica: a key the dead replica held is taken over
    # once its lease ran out, and what its attempt wrote is removed before the re-run
    with httpx.Client(base_url=b.url, headers=TENANT_A, timeout=120.0) as http:
        for t in range(THREADS):
            for n in range(ADDS_PER_THREAD):
                r = http.post("/memories", json=body(f"k9u{t}", n, MESSAGES_PER_ADD),
                              headers={"Idempotency-Key": f"k9-{t}-{n}"})  # fmt: skip
                assert r.status_code == 200, r.text
        _assert_consistent(http)

    a.launch()  # start-up reconciliation on the shared log leaves live replicas' intents alone
    a.wait_ready()
    with httpx.Client(base_url=a.url, headers=TENANT_A, timeout=120.0) as http:
        _assert_consistent(http)
        assert http.post("/reset").status_code == 200
    with httpx.Client(base_url=b.url, headers=TENANT_A, timeout=120.0) as http:
        for t in range(THREADS):
            items, _ = state(http, f"k9u{t}")
            assert items == []
    with httpx.Client(base_url=b.url, headers=TENANT_B, timeout=60.0) as http:
        items, _ = state(http, "k9-other")
        assert len(items) == MESSAGES_PER_ADD  # another tenant's memories survive the reset
