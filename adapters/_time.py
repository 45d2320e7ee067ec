"""Timestamps at the edge: the decision log and its reports keep aware UTC times."""

from __future__ import annotations

from datetime import UTC, datetime


def as_utc(ts: datetime) -> datetime:
    """Aware UTC: naive times are taken as UTC, aware ones converted (SQLite compares text)."""
    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)
