"""The cost a report prints: a call litellm has no price for (a self-hosted or unlisted model)
never reads as 0.0000 (the bench report's Cost table printed 0.0000 beside them)."""

from __future__ import annotations

import pytest

from mirage_guard.benchmark._records import Accounting, CallInfo


@pytest.mark.parametrize(
    ("costs", "shown"),
    [
        ([0.001, 0.002], "0.0030"),
        ([None, None], "–"),  # no fresh call priced: unknown, not free
        ([0.001, None], "at least 0.0010"),
        ([0.0], "0.0000"),  # a known price of nothing (the offline provider) is 0
        ([], "0.0000"),
    ],
)
def test_cost_text_says_when_a_price_is_unknown(costs: list[float | None], shown: str) -> None:
    acc = Accounting()
    acc.add_calls([CallInfo(model="m", cost_usd=c) for c in costs])
    acc.add_calls([CallInfo(model="m", cost_usd=None, cached=True)])  # a cache hit costs nothing
    assert acc.cost_text() == shown
