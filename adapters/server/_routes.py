"""Routes: Mem0 OSS REST, the routes ``mem0.MemoryClient`` calls, guard-native, operations."""

from __future__ import annotations

import functools
import logging
from datetime import datetime
from typing import Annotated, Any

import anyio
import anyio.to_thread
from fastapi import APIRouter, Header, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BeforeValidator

from mirage_guard.adapters._async_memory import ENTITY_KINDS
from mirage_guard.adapters._data_dir import data_dir_problem
from mirage_guard.adapters._decision_log import DecisionQuery, claim_key
from mirage_guard.adapters._outbox import IdempotentCall, idempotent_call
from mirage_guard.adapters._scope import MemoryScope
from mirage_guard.adapters._tenancy import scope_of
from mirage_guard.adapters.server._deps import SidecarDep, TenantDep, request_hash
from mirage_guard.adapters.server._models import (
    AddRequest,
    AddResponse,
    DecisionList,
    EntityList,
    ErrorResponse,
    Health,
    ItemList,
    MemoryItem,
    Message,
    PagedItems,
    Ping,
    ProfilesResponse,
    ProfileSummary,
    Readiness,
    SearchRequest,
    TagRequest,
    TagResponse,
    UpdateRequest,
    UpdateResponse,
    V3AddRequest,
    V3ListRequest,
    V3SearchRequest,
)
from mirage_guard.guard import Action, Provenance
from mirage_guard.guard.errors import (
    BackendUnavailableError,
    ConfigError,
    InputError,
    MemoryNotFoundError,
)
from mirage_guard.guard.evidence import cache_namespace
from mirage_guard.guard.llm import structured_output_modes

log = logging.getLogger("mirage.server")
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 404, 409, 413, 422, 502, 503)
}
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=200,
        description="a retry with the same key and body returns the first answer",
    ),
]
MemoryId = Annotated[str, Path(min_length=1, max_length=200, pattern=r"^\S+$")]
# trimmed as a body's ids are (" u1 " is "u1" there, and was a 422 here)
ScopeId = Annotated[
    str | None,
    BeforeValidator(lambda v: v.strip() if isinstance(v, str) else v),
    Query(min_length=1, max_length=200, pattern=r"^\S+$"),
]


def _a_date_not_a_number(value: Any) -> Any:
    """pydantic reads "20240101" as seconds since 1970 (1970-08-23): a date typed without its
    dashes read as a time in 1970, and every decision since then came back."""
    if isinstance(value, str) and value.strip().lstrip("+-").replace(".", "", 1).isdigit():
        raise ValueError(
            "give an ISO 8601 date or time (2026-12-01, 2026-12-01T09:30:00Z), not a number"
        )
    return value


# a date or time of ``/v1/decisions`` (since, until)
When = Annotated[datetime | None, BeforeValidator(_a_date_not_a_number), Query()]

mem0_router = APIRouter(responses=ERRORS)
guard_router = APIRouter(responses=ERRORS, tags=["guard"])
ops_router = APIRouter(tags=["operations"])


# ---------------------------------------------------------------------- shared handlers
async def _add(sidecar: SidecarDep, tenant: str, body: AddRequest, key: str | None) -> JSONResponse:
    memory = sidecar.memory_for(tenant)
    scope = body.scope()
    infer = True if body.infer is None else body.infer

    # a null content (a tool call) is skipped as Mem0 skips it; a name is not kept
    messages = [
        m.model_dump(exclude_none=True, exclude={"name", "tool_calls", "tool_call_id"})
        for m in body.messages
        if m.content is not None
    ]

    async def run() -> dict[str, Any]:
        return await memory.add(
            messages,
            infer=infer,
            metadata=body.metadata,
            **scope.as_kwargs(),
        )

    if key is None:
        return JSONResponse(await run())
    digest = request_hash(body)
    log = sidecar.decision_log
    s = sidecar.settings
    # the claim is atomic in the database, so it holds across replicas; the lock only saves
    # this process from polling the database for its own concurrent retries
    async with sidecar.idempotency_lock(tenant, key):
        claim = await claim_key(
            log, tenant, key, digest, lease_s=s.idempotency_lease_s, wait_s=s.idempotency_wait_s
        )
        if claim.response is not None:
            return JSONResponse(claim.response, headers={"Idempotent-Replayed": "true"})
        assert claim.token is not None
        call = IdempotentCall(key=key, request_hash=digest, token=claim.token)
        try:
            with idempotent_call(call):  # a write answers the key in its done transaction
                result = await run()
        except BaseException:
            with anyio.CancelScope(shield=True):  # the write was undone: let a retry run it
                await anyio.to_thread.run_sync(log.release, tenant, key, claim.token)
            raise
        if not call.answered:  # nothing was stored (no intent): answer it here
            await anyio.to_thread.run_sync(
                functools.partial(log.save_reply, tenant, key, digest, result, token=claim.token)
            )
        return JSONResponse(result)


async def _get(sidecar: SidecarDep, tenant: str, memory_id: str) -> dict[str, Any]:
    item = await sidecar.memory_for(tenant).get(memory_id)
    if item is None:
        raise MemoryNotFoundError(memory_id)
    return item


def _scope_or_400(user_id: str | None, agent_id: str | None, run_id: str | None) -> MemoryScope:
    return scope_of(user_id, agent_id, run_id)


# ---------------------------------------------------------------------- Mem0 OSS REST
@mem0_router.post("/memories", tags=["mem0"], response_model=AddResponse)
async def add_memories(
    body: AddRequest, sidecar: SidecarDep, tenant: TenantDep, idempotency_key: IdempotencyKey = None
) -> JSONResponse:
    """Guarded add: extract (infer=true) or take messages verbatim, tag, write approved facts."""
    return await _add(sidecar, tenant, body, idempotency_key)


@mem0_router.get("/memories", tags=["mem0"], response_model=ItemList)
async def list_memories(
    sidecar: SidecarDep,
    tenant: TenantDep,
    user_id: ScopeId = None,
    agent_id: ScopeId = None,
    run_id: ScopeId = None,
    top_k: Annotated[int, Query(ge=1, le=1000)] = 100,
    include_hypotheses: bool = False,
    include_quarantined: bool = False,
) -> dict[str, Any]:
    scope = _scope_or_400(user_id, agent_id, run_id)
    return await sidecar.memory_for(tenant).get_all(
        filters=scope.as_kwargs(),
        top_k=top_k,
        include_hypotheses=include_hypotheses,
        include_quarantined=include_quarantined,
    )


@mem0_router.get("/memories/{memory_id}", tags=["mem0"], response_model=MemoryItem)
async def get_memory(memory_id: MemoryId, sidecar: SidecarDep, tenant: TenantDep) -> dict[str, Any]:
    return await _get(sidecar, tenant, memory_id)


@mem0_router.post("/search", tags=["mem0"], response_model=ItemList)
async def search_memories(body: SearchRequest, sidecar: SidecarDep, tenant: TenantDep) -> Any:
    return await sidecar.memory_for(tenant).search(
        body.query,
        filters=body.merged_filters(),
        top_k=body.top_k,
        threshold=body.threshold,
        include_hypotheses=body.include_hypotheses,
        include_quarantined=body.include_quarantined,
    )


@mem0_router.put("/memories/{memory_id}", tags=["mem0"], response_model=UpdateResponse)
async def update_memory(
    memory_id: MemoryId, body: UpdateRequest, sidecar: SidecarDep, tenant: TenantDep
) -> dict[str, Any]:
    """New text is tagged against the memory's conversation like a write (never kept as
    stated on the caller's word); the decision is logged and returned."""
    return await sidecar.memory_for(tenant).update(
        memory_id, text=body.text, metadata=body.metadata
    )


@mem0_router.delete("/memories/{memory_id}", tags=["mem0"], response_model=Message)
async def delete_memory(memory_id: MemoryId, sidecar: SidecarDep, tenant: TenantDep) -> Any:
    return await sidecar.memory_for(tenant).delete(memory_id)


FILTERS_NOT_READ = (
    "delete all takes user_id, agent_id or run_id as query parameters, not filters= (what "
    "MemoryClient.delete_all(filters={...}) sends, a Python dict's repr): call "
    "delete_all(user_id=...) (or agent_id=... / run_id=...); nothing was deleted"
)


@mem0_router.delete("/memories", tags=["mem0"], response_model=Message)
async def delete_all_memories(
    request: Request,
    sidecar: SidecarDep,
    tenant: TenantDep,
    user_id: ScopeId = None,
    agent_id: ScopeId = None,
    run_id: ScopeId = None,
) -> dict[str, str]:
    """Every memory of one scope. A ``filters`` query parameter is refused, not parsed: the
    Mem0 client sends it as ``str(dict)`` (httpx's fallback for a dict value), a form with no
    spec to read it by, and a delete does not guess at one."""
    if "filters" in request.query_params:
        raise InputError(FILTERS_NOT_READ)
    scope = _scope_or_400(user_id, agent_id, run_id)
    return await sidecar.memory_for(tenant).delete_all(**scope.as_kwargs())


@mem0_router.get("/memories/{memory_id}/history", tags=["mem0"])
async def memory_history(
    memory_id: MemoryId, sidecar: SidecarDep, tenant: TenantDep
) -> list[dict[str, Any]]:
    return await sidecar.memory_for(tenant).history(memory_id)


@mem0_router.post("/reset", tags=["mem0"], response_model=Message)
async def reset_memories(
    request: Request, sidecar: SidecarDep, tenant: TenantDep
) -> dict[str, str]:
    """Delete every memory of the caller's tenant (the whole store when auth is off). Takes no
    body: a body naming a user (``{"user_id": "x"}``) is refused, not read as a narrower reset."""
    if (await request.body()).strip() not in (b"", b"{}"):
        raise InputError(
            "POST /reset takes no body: it deletes every memory of the tenant. To delete one "
            "user's, agent's or run's memories: DELETE /memories?user_id=... (nothing was deleted)"
        )
    await sidecar.memory_for(tenant).reset()
    return {"message": "All memories reset"}


# ---------------------------------------------------------------------- mem0.MemoryClient
@mem0_router.get("/v1/ping/", tags=["mem0 client"], response_model=Ping)
async def ping(tenant: TenantDep) -> Ping:
    """Key check ``MemoryClient`` makes on construction; the tenant is its organisation."""
    return Ping(org_id=tenant, project_id="mirage-guard")


@mem0_router.post("/v3/memories/add/", tags=["mem0 client"], response_model=AddResponse)
async def client_add(
    body: V3AddRequest,
    sidecar: SidecarDep,
    tenant: TenantDep,
    idempotency_key: IdempotencyKey = None,
) -> JSONResponse:
    return await _add(sidecar, tenant, body, idempotency_key)


@mem0_router.post("/v3/memories/search/", tags=["mem0 client"], response_model=ItemList)
async def client_search(body: V3SearchRequest, sidecar: SidecarDep, tenant: TenantDep) -> Any:
    return await search_memories(body, sidecar, tenant)


PAGE_MAX, PAGE_SIZE_MAX = 1000, 100
LISTED_MAX = PAGE_MAX * PAGE_SIZE_MAX  # the memories `get_all`'s pages can reach


@mem0_router.post("/v3/memories/", tags=["mem0 client"], response_model=PagedItems)
async def client_list(
    body: V3ListRequest,
    request: Request,
    sidecar: SidecarDep,
    tenant: TenantDep,
    page: Annotated[int, Query(ge=1, le=PAGE_MAX)] = 1,
    page_size: Annotated[int, Query(ge=1, le=PAGE_SIZE_MAX)] = 100,
) -> dict[str, Any]:
    filters = body.filters.as_filters() if body.filters else {}
    # every memory of the scope, up to what the largest page reaches: `count` is the total, as
    # Mem0's paginated answer gives it (it was the items up to this page, and no page went past
    # the 1,000th memory)
    result = await sidecar.memory_for(tenant).get_all(
        filters=filters,
        top_k=LISTED_MAX,
        include_hypotheses=body.include_hypotheses,
        include_quarantined=body.include_quarantined,
    )
    items: list[dict[str, Any]] = result["results"]
    start = (page - 1) * page_size
    window = items[start : start + page_size]
    has_next = len(items) > start + page_size
    return {
        "count": len(items),
        "next": _page_link(request, page + 1) if has_next else None,
        "previous": _page_link(request, page - 1) if page > 1 else None,
        "results": window,
    }


def _page_link(request: Request, page: int) -> str:
    """A link to ``page`` of this listing, relative (path and query): the ``Host`` header is
    the caller's to write, so it is not echoed back, and no public base URL is configured.
    ``MemoryClient.get_all`` returns the links without following them; a caller that does
    resolves them against the URL it called."""
    url = request.url.include_query_params(page=page)
    return f"{url.path}?{url.query}"


@mem0_router.get("/v1/memories/{memory_id}/", tags=["mem0 client"], response_model=MemoryItem)
async def client_get(memory_id: MemoryId, sidecar: SidecarDep, tenant: TenantDep) -> Any:
    return await _get(sidecar, tenant, memory_id)


@mem0_router.put("/v1/memories/{memory_id}/", tags=["mem0 client"], response_model=UpdateResponse)
async def client_update(
    memory_id: MemoryId, body: UpdateRequest, sidecar: SidecarDep, tenant: TenantDep
) -> Any:
    return await update_memory(memory_id, body, sidecar, tenant)


@mem0_router.delete("/v1/memories/{memory_id}/", tags=["mem0 client"], response_model=Message)
async def client_delete(
    memory_id: MemoryId,
    sidecar: SidecarDep,
    tenant: TenantDep,
    delete_linked: bool = False,
) -> Any:
    """``delete_linked`` is accepted: the guard never links memories, so there is nothing more."""
    return await sidecar.memory_for(tenant).delete(memory_id)


@mem0_router.delete("/v1/memories/", tags=["mem0 client"], response_model=Message)
async def client_delete_all(
    request: Request,
    sidecar: SidecarDep,
    tenant: TenantDep,
    user_id: ScopeId = None,
    agent_id: ScopeId = None,
    run_id: ScopeId = None,
) -> Any:
    return await delete_all_memories(request, sidecar, tenant, user_id, agent_id, run_id)


@mem0_router.get("/v1/entities/", tags=["mem0 client"], response_model=EntityList)
async def client_entities(sidecar: SidecarDep, tenant: TenantDep) -> dict[str, Any]:
    """``MemoryClient.users()``: the users, agents and runs the tenant has memories of (any
    status), with how many each."""
    found = await sidecar.memory_for(tenant).entities()
    return {"count": len(found), "next": None, "previous": None, "results": found}


# ":path": the client sends an id's "/" as %2F, which arrives decoded ("team/alice"); the
# trailing "/" stays the route's own, so "/v2/entities/user/team%2Falice/" is user "team/alice"
@mem0_router.delete(
    "/v2/entities/{entity_type}/{entity_id:path}/", tags=["mem0 client"], response_model=Message
)
async def client_delete_entity(
    entity_type: Annotated[str, Path(min_length=1, max_length=20)],
    entity_id: MemoryId,
    sidecar: SidecarDep,
    tenant: TenantDep,
) -> dict[str, str]:
    """``MemoryClient.delete_users(...)`` and ``reset()``: every memory of one user, agent or
    run of the tenant (any status); an entity it has no memory of is 200 too (nothing to
    delete: telling "never existed" from "went with another entity" would mean reading every
    scope the tenant ever wrote). Apps are not a scope here (400, nothing deleted)."""
    key = ENTITY_KINDS.get(entity_type)
    if key is None:
        raise InputError(
            f"entity type {entity_type!r} is not kept here: one of {', '.join(ENTITY_KINDS)} "
            "(nothing was deleted)"
        )
    ids = {k: entity_id if k == key else None for k in ENTITY_KINDS.values()}
    await sidecar.memory_for(tenant).delete_all(**scope_of(**ids).as_kwargs())
    return {"message": "Entity deleted successfully."}


BATCH_UNSUPPORTED = (
    "batch update and delete are not supported by the sidecar: update or delete each memory "
    "with PUT or DELETE /v1/memories/{id}/ (nothing was changed)"
)


# not in the OpenAPI schema: a route that only refuses is no feature to offer
@mem0_router.api_route(
    "/v1/batch/", methods=["PUT", "DELETE"], tags=["mem0 client"], include_in_schema=False
)
async def client_batch(tenant: TenantDep) -> None:
    """``MemoryClient.batch_update`` / ``batch_delete``: 501, as other features this sidecar
    does not offer (it answered 404, which the client reads as a missing memory)."""
    raise ConfigError(BATCH_UNSUPPORTED)


@mem0_router.get("/v1/memories/{memory_id}/history/", tags=["mem0 client"])
async def client_history(
    memory_id: MemoryId, sidecar: SidecarDep, tenant: TenantDep
) -> list[dict[str, Any]]:
    return await sidecar.memory_for(tenant).history(memory_id)


# ---------------------------------------------------------------------- guard-native
@guard_router.post("/v1/guard/tag", response_model=TagResponse)
async def tag(body: TagRequest, sidecar: SidecarDep, tenant: TenantDep) -> TagResponse:
    """Stateless: decisions for the given turns and candidates; nothing is written or logged."""
    with cache_namespace(tenant):  # no answer is faster because another tenant sent the text
        decisions = await sidecar.memory.guard.atag(
            body.turns,
            body.candidates,
            writer_model=body.writer_model,
            audit=body.audit,
            user_name=body.user_name,
        )
    return TagResponse(decisions=decisions)


@guard_router.get("/v1/decisions", response_model=DecisionList)
async def decisions(
    sidecar: SidecarDep,
    tenant: TenantDep,
    user_id: ScopeId = None,
    provenance: Provenance | None = None,
    action: Action | None = None,
    memory_id: ScopeId = None,
    since: When = None,
    until: When = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> DecisionList:
    """Why each memory was stored (or not): the caller's tenant only, newest first."""
    if user_id is not None:  # "*", "." and ".." are no ids here either (400, as on every route)
        user_id = scope_of(user_id, None, None).user_id
    q = DecisionQuery(
        user_id=user_id,
        provenance=provenance,
        action=action,
        memory_id=memory_id,
        since=since,
        until=until,
        limit=limit,
        offset=offset,
    )
    rows = await anyio.to_thread.run_sync(sidecar.decision_log.query, tenant, q)
    return DecisionList(results=rows)


@guard_router.get("/v1/profiles", response_model=ProfilesResponse)
async def profiles(sidecar: SidecarDep, tenant: TenantDep) -> ProfilesResponse:
    """The guard's active configuration and every calibration profile it can use."""
    return ProfilesResponse(
        guard={
            **sidecar.memory.guard.describe(),
            "structured_output": [d.model_dump(mode="json") for d in structured_output_modes()],
        },
        profiles=[
            ProfileSummary(
                profile_id=p.profile_id,
                mode=p.mode.value,
                writer_model=p.writer_model,
                prompt_version=p.prompt_version,
                oi_threshold=p.oi_threshold,
                stated_threshold=p.stated_threshold,
                objective=p.objective,
                profile_hash=p.content_hash,
                fitted_score_distribution=p.score_distribution is not None,
                guard_held_out={
                    k: v
                    for k, v in p.metrics.items()
                    if k.startswith(("dev_guard_", "heldout_guard_"))
                },
            )
            for p in sidecar.profiles.all()
        ],
        drift=sidecar.metrics.drift.reading(
            sidecar.memory.guard.writer_model or sidecar.memory.guard.auditor_model or ""
        ),
    )


# ---------------------------------------------------------------------- operations
@ops_router.get("/metrics", response_class=Response)
async def metrics(sidecar: SidecarDep) -> Response:
    """Prometheus metrics (labels: model, provenance, action, stage, status; never user ids)."""
    return Response(generate_latest(sidecar.metrics.registry), media_type=CONTENT_TYPE_LATEST)


@ops_router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    return Health()


@ops_router.get("/readyz", response_model=Readiness, responses={503: {"model": ErrorResponse}})
async def readyz(sidecar: SidecarDep) -> Readiness:
    """Ready when the store and the decision log answer and the data dir takes writes."""
    s = sidecar.settings
    problem = await anyio.to_thread.run_sync(
        lambda: data_dir_problem(s.data_dir, min_free_bytes=s.min_free_bytes)
    )
    if problem != sidecar.data_dir_problem:  # one log line per change, not one per probe
        if problem is None:
            log.warning("data dir usable again: %s", s.data_dir)
        else:
            log.error("not ready: %s (MIRAGE_DATA_DIR)", problem)
        sidecar.data_dir_problem = problem
    if problem is not None:
        raise BackendUnavailableError(f"data directory unusable: {problem}")
    await sidecar.backend.ping()
    try:
        await anyio.to_thread.run_sync(sidecar.decision_log.ping)
    except Exception as exc:
        raise BackendUnavailableError(f"decision log unavailable: {type(exc).__name__}") from exc
    return Readiness(backend=sidecar.backend.name)
