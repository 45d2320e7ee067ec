"""The sidecar shows the policy's stated floor (`MIRAGE_STATED_MIN`) it decides with."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient


def test_profiles_show_the_stated_floor_in_force(make_client: Callable[..., TestClient]) -> None:
    unset = make_client().get("/v1/profiles").json()["guard"]["policy"]
    assert unset == {
        "inferred_action": "store_as_hypothesis",
        "generated_action": "quarantine",
        "stated_min": None,
    }
    strict = make_client(stated_min=0.9).get("/v1/profiles").json()["guard"]["policy"]
    assert strict["stated_min"] == 0.9
