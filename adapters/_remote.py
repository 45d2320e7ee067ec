"""A remote Mem0 open-source REST server as the store (httpx; the server's own routes).

Routes used: ``POST /memories`` (with ``infer: false``), ``GET /memories``, ``GET /memories/{id}``,
``POST /search``, ``PUT /memories/{id}``, ``DELETE /memories/{id}``, ``DELETE /memories``,
``GET /memories/{id}/history``, ``POST /reset``. Filters the server might ignore are applied again
on the client, so a quarantined item is never returned because an upstream dropped a filter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import httpx

from mirage_guard.adapters._backend import SCOPE_KEYS, Item, MemoryBackend
from mirage_guard.adapters._filters import matches
from mirage_guard.adapters._scope import MemoryScope
from mirage_guard.guard.errors import (
    BackendError,
    BackendUnavailableError,
    InputError,
    MemoryNotFoundError,
)


def _path_id(memory_id: str) -> str:
    return quote(memory_id, safe="")


class RemoteMem0Backend(MemoryBackend):
    """Talks to a Mem0 REST server at ``base_url``."""

    name = "mem0-remote"

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"X-API-Key": api_key} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=timeout_s,
            transport=transport,
            follow_redirects=False,
        )

    async def _request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        memory_id: str | None = None,
    ) -> Any:
        try:
            response = await self._client.request(method, path, json=json, params=params)
        except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            raise BackendUnavailableError(
                f"Mem0 server at {self.base_url} unreachable: {type(exc).__name__}"
            ) from exc
        if response.status_code == 404 and memory_id is not None:
            raise MemoryNotFoundError(memory_id)
        if response.status_code >= 500:
            # Mem0's OSS server answers 500 for every store error, an unknown id included
            if memory_id is not None and method != "GET" and await self._missing(memory_id):
                raise MemoryNotFoundError(memory_id)
            raise BackendUnavailableError(
                f"Mem0 server at {self.base_url} answered {response.status_code}"
            )
        if response.status_code in (400, 422):
            raise InputError(f"Mem0 server rejected the request ({response.status_code})")
        if response.status_code >= 400:
            raise BackendError(f"Mem0 server answered {response.status_code} to {method} {path}")
        try:
            return response.json()
        except ValueError as exc:
            raise BackendError(f"Mem0 server sent invalid JSON for {method} {path}") from exc

    async def _missing(self, memory_id: str) -> bool:
        """Whether the server positively has no memory ``memory_id`` (a failed probe: unknown)."""
        try:
            return await self.get(memory_id) is None
        except BackendUnavailableError:
            return False

    @staticmethod
    def _results(data: Any) -> list[Item]:
        if isinstance(data, dict):
            data = data.get("results", [])
        if not isinstance(data, list):
            raise BackendError("Mem0 server sent an unexpected result shape")
        return [item for item in data if isinstance(item, dict)]

    async def add(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        scope: MemoryScope,
        metadata: Mapping[str, Any] | None = None,
    ) -> list[Item]:
        body = {
            "messages": [dict(m) for m in messages],
            **scope.as_kwargs(),
            "metadata": dict(metadata or {}),
            "infer": False,
        }
        return self._results(await self._request("POST", "/memories", json=body))

    async def get(self, memory_id: str) -> Item | None:
        try:
            data = await self._request(
                "GET", f"/memories/{_path_id(memory_id)}", memory_id=memory_id
            )
        except MemoryNotFoundError:
            return None
        return data if isinstance(data, dict) and data.get("id") else None

    async def get_all(self, *, filters: Mapping[str, Any], top_k: int) -> list[Item]:
        params = {k: filters[k] for k in SCOPE_KEYS if isinstance(filters.get(k), str)}
        items = self._results(await self._request("GET", "/memories", params=params))
        return [i for i in items if matches(i, filters)][:top_k]

    async def search(
        self, query: str, *, filters: Mapping[str, Any], top_k: int, threshold: float
    ) -> list[Item]:
        scope = {k: filters[k] for k in SCOPE_KEYS if isinstance(filters.get(k), str)}
        rest = {k: v for k, v in filters.items() if k not in SCOPE_KEYS}
        body = {"query": query, **scope, "filters": {**scope, **rest}, "top_k": top_k,
                "threshold": threshold}  # fmt: skip
        items = self._results(await self._request("POST", "/search", json=body))
        return [i for i in items if matches(i, filters)][:top_k]

    async def update(
        self, memory_id: str, *, text: str | None, metadata: Mapping[str, Any] | None
    ) -> None:
        body: dict[str, Any] = {}
        if text is not None:
            body["text"] = text
        if metadata is not None:
            body["metadata"] = dict(metadata)
        await self._request(
            "PUT", f"/memories/{_path_id(memory_id)}", json=body, memory_id=memory_id
        )

    async def delete(self, memory_id: str) -> None:
        await self._request("DELETE", f"/memories/{_path_id(memory_id)}", memory_id=memory_id)

    async def delete_all(self, scope: MemoryScope) -> None:
        await self._request("DELETE", "/memories", params=scope.as_kwargs())

    async def history(self, memory_id: str) -> list[Item]:
        data = await self._request(
            "GET", f"/memories/{_path_id(memory_id)}/history", memory_id=memory_id
        )
        return self._results(data)

    async def reset(self) -> None:
        await self._request("POST", "/reset")

    async def ping(self) -> None:
        try:
            await self._client.get("/openapi.json")
        except httpx.HTTPError as exc:
            raise BackendUnavailableError(
                f"Mem0 server at {self.base_url} unreachable: {type(exc).__name__}"
            ) from exc

    async def aclose(self) -> None:
        await self._client.aclose()


__all__ = ["RemoteMem0Backend"]
