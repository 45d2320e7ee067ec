"""Admin operations of the sidecar: reload calibration profiles without a restart.

``POST /v1/admin/profiles/reload`` (an admin key from ``MIRAGE_ADMIN_KEYS``, never a tenant's
key) and SIGHUP to ``mirage serve`` run the same :func:`reload_profiles`: read every profile in
``MIRAGE_PROFILE_DIR`` again, pick the guard's pair as at start-up and swap it in atomically. A
bad file or a profile the guard may not use (another model's, prompt's, mode's or embedder's) is
refused with a typed error (409 ``profile_error``) and the profiles in use stay as they were.
"""

from __future__ import annotations

import hmac
import logging
from pathlib import Path
from typing import Annotated

import anyio.to_thread
from fastapi import APIRouter, Depends, Request, Security
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, ConfigDict

from mirage_guard.adapters.server._deps import Sidecar, SidecarDep, get_sidecar, presented_key
from mirage_guard.adapters.server._errors import ForbiddenError, UnauthorizedError
from mirage_guard.adapters.server._models import ErrorResponse
from mirage_guard.guard.errors import ProfileError
from mirage_guard.guard.scoring import CalibrationProfile, DriftReading, ProfileStore

log = logging.getLogger("mirage.server")


class ProfileRef(BaseModel):
    """Which profile, and which version of it (the hash every decision records)."""

    model_config = ConfigDict(frozen=True)

    profile_id: str
    profile_hash: str

    @classmethod
    def of(cls, profile: CalibrationProfile | None) -> ProfileRef | None:
        if profile is None:
            return None
        return cls(profile_id=profile.profile_id, profile_hash=profile.content_hash)


class ProfileReload(BaseModel):
    """What a reload changed."""

    model_config = ConfigDict(frozen=True)

    trigger: str
    changed: bool
    evidence_profile: ProfileRef
    audit_profile: ProfileRef | None
    previous_audit_profile: ProfileRef | None
    profiles_loaded: int
    drift: DriftReading | None
    uncalibrated: str | None = None  # why the audit has no profile now (Guard.uncalibrated_audit)


async def reload_profiles(sidecar: Sidecar, *, trigger: str) -> ProfileReload:
    """Reload every profile and swap the guard's pair in; raises ProfileError (nothing changed)
    on a bad file or an inapplicable profile. Reloads run one at a time."""
    async with sidecar.reload_lock:
        guard = sidecar.memory.guard
        before = guard.profiles
        try:
            store = await _read_profiles(sidecar.settings.profile_dir)
            after = guard.reload_profiles(store)  # checked, then swapped in one assignment
        except ProfileError as exc:
            log.error("profile reload (%s) refused, profiles unchanged: %s", trigger, exc)
            raise
        sidecar.profiles = store
        drift = sidecar.metrics.track_guard(guard)
        result = ProfileReload(
            trigger=trigger,
            changed=[ProfileRef.of(p) for p in before] != [ProfileRef.of(p) for p in after],
            evidence_profile=ProfileRef(
                profile_id=after.evidence.profile_id, profile_hash=after.evidence.content_hash
            ),
            audit_profile=ProfileRef.of(after.audit),
            previous_audit_profile=ProfileRef.of(before.audit),
            profiles_loaded=len(store.all()),
            drift=drift,
            uncalibrated=guard.uncalibrated_audit(
                api_base=sidecar.settings.audit_labeller()[1], store=store
            ),
        )
        if result.uncalibrated:  # a reload that left the audit without its profile says so
            log.warning("after the profile reload (%s): %s", trigger, result.uncalibrated)
        log.warning(
            "profiles reloaded (%s): evidence=%s@%s audit=%s changed=%s",
            trigger,
            result.evidence_profile.profile_id,
            result.evidence_profile.profile_hash,
            f"{result.audit_profile.profile_id}@{result.audit_profile.profile_hash}"
            if result.audit_profile
            else "none",
            result.changed,
        )
        return result


async def _read_profiles(directory: Path | None) -> ProfileStore:
    try:
        return await anyio.to_thread.run_sync(ProfileStore, directory)
    except OSError as exc:
        raise ProfileError(f"cannot read profiles in {directory}: {exc.strerror}") from exc


async def reload_on_signal(sidecar: Sidecar) -> None:
    """The SIGHUP handler's task: a refused reload is logged, never raised into the loop."""
    try:
        await reload_profiles(sidecar, trigger="SIGHUP")
    except ProfileError:
        return  # logged by reload_profiles; the old profiles stay
    except Exception:  # a signal handler has no caller to raise to: log, keep serving
        log.exception("profile reload (SIGHUP) failed, profiles unchanged")


_ADMIN_TOKEN = APIKeyHeader(
    name="Authorization",
    scheme_name="AdminToken",
    description="'Bearer <admin key>' (a key of MIRAGE_ADMIN_KEYS, never a tenant key)",
    auto_error=False,
)


def require_admin(
    request: Request, _token: Annotated[str | None, Security(_ADMIN_TOKEN)] = None
) -> None:
    """Admin routes need a key of ``MIRAGE_ADMIN_KEYS`` that is no tenant's key (the settings
    refuse such an overlap at start-up; checked here too); without any configured they are off."""
    sidecar = get_sidecar(request)
    keys = sidecar.settings.admin_key_list()
    if not keys:
        raise ForbiddenError("admin routes are off: set MIRAGE_ADMIN_KEYS (or send SIGHUP)")
    presented = presented_key(request)
    if presented is None:
        raise UnauthorizedError("missing admin key: send 'Authorization: Bearer <admin key>'")
    ok = tenant = False
    for key in keys:  # compare with every key: the time taken does not say which matched
        ok |= hmac.compare_digest(key.encode(), presented.encode())
    for key in sidecar.keys:
        tenant |= hmac.compare_digest(key.encode(), presented.encode())
    if not ok or tenant:
        raise UnauthorizedError("invalid admin key")


admin_router = APIRouter(
    tags=["admin"],
    dependencies=[Depends(require_admin)],
    responses={code: {"model": ErrorResponse} for code in (401, 403, 409)},
)


@admin_router.post("/v1/admin/profiles/reload", response_model=ProfileReload)
async def reload_profiles_route(sidecar: SidecarDep) -> ProfileReload:
    """Reload calibration profiles from MIRAGE_PROFILE_DIR without a restart (atomic: a bad or
    inapplicable profile is refused with 409 and the profiles in use stay)."""
    return await reload_profiles(sidecar, trigger="admin route")


__all__ = ["ProfileReload", "admin_router", "reload_on_signal", "reload_profiles"]
