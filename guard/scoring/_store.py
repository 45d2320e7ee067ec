"""Where profiles live: the shipped ones (package data) plus a user directory."""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from mirage_guard.guard.errors import ProfileError, ProfileNotFoundError
from mirage_guard.guard.scoring._profile import CalibrationProfile, ProfileMode


class ProfileStore:
    def __init__(self, extra_dir: Path | None = None) -> None:
        self.extra_dir = extra_dir
        self._profiles: dict[str, CalibrationProfile] = {}
        shipped = resources.files("mirage_guard.guard.scoring").joinpath("profiles")
        for entry in sorted(shipped.iterdir(), key=lambda p: p.name):
            if entry.name.endswith(".json"):
                self._add(CalibrationProfile.model_validate_json(entry.read_text("utf-8")))
        if extra_dir is not None and extra_dir.is_dir():
            for path in sorted(extra_dir.glob("*.json")):
                try:
                    self._add(CalibrationProfile.model_validate_json(path.read_text("utf-8")))
                except ValueError as exc:
                    raise ProfileError(f"invalid profile file {path}: {exc}") from exc

    def _add(self, profile: CalibrationProfile) -> None:
        self._profiles[profile.profile_id] = profile

    def all(self) -> list[CalibrationProfile]:
        return list(self._profiles.values())

    def get(self, profile_id: str) -> CalibrationProfile:
        try:
            return self._profiles[profile_id]
        except KeyError:
            raise ProfileNotFoundError(f"no calibration profile {profile_id!r}") from None

    def evidence_only(self, embedders: Sequence[str] | None = None) -> CalibrationProfile:
        """The evidence-only profile (``embedders``: one fitted with one of these embedders;
        a profile from ``extra_dir`` wins over the shipped one)."""
        found = [p for p in self._profiles.values() if p.mode is ProfileMode.EVIDENCE]
        if embedders is not None:
            found = [p for p in found if p.embedder in embedders]
        if found:
            return found[-1]
        if embedders is not None:
            raise ProfileNotFoundError(
                f"no evidence-only profile fitted with {' / '.join(embedders)}: fit one with that "
                "embedder and put it in MIRAGE_PROFILE_DIR (README, 'Other languages')"
            )
        raise ProfileNotFoundError("no evidence-only profile is installed")

    def for_writer(
        self, writer_model: str, mode: ProfileMode, prompt_version: str
    ) -> CalibrationProfile:
        """The profile fitted for exactly this key; never another model's."""
        for p in self._profiles.values():
            if (p.mode, p.writer_model, p.prompt_version) == (mode, writer_model, prompt_version):
                return p
        raise ProfileNotFoundError(
            f"no {mode.value} profile for writer model {writer_model!r} and prompt "
            f"{prompt_version}; fit one with `mirage calibrate audit --writer-model "
            f"{writer_model} --out V.jsonl` (with --as-auditor for an independent auditor) then "
            "`mirage calibrate fit --verdicts V.jsonl --profile-dir DIR` (or `mirage calibrate "
            "job` for the configured writer or auditor)"
        )

    def save(self, profile: CalibrationProfile, directory: Path | None = None) -> Path:
        target = directory or self.extra_dir
        if target is None:
            raise ProfileError("no profile directory configured (set MIRAGE_PROFILE_DIR)")
        target.mkdir(parents=True, exist_ok=True)
        path = target / f"{profile.profile_id}.json"
        _refuse_another_key(path, profile)
        # write then rename: a reload never reads half a file (the temporary name is no *.json)
        partial = target / f".{profile.profile_id}.json.partial"
        partial.write_text(profile.model_dump_json(indent=2), encoding="utf-8")
        os.replace(partial, path)
        self._add(profile)
        return path


def _key(p: CalibrationProfile) -> tuple[ProfileMode, str | None, str | None]:
    return p.mode, p.writer_model, p.prompt_version


def _refuse_another_key(path: Path, profile: CalibrationProfile) -> None:
    """A profile id maps ``/`` to ``__``, so two writer models ("org/m__x", "org__m/x") can share
    a file name: never replace one model's profile with another's."""
    if not path.is_file():
        return
    try:
        there = CalibrationProfile.model_validate_json(path.read_text("utf-8"))
    except (OSError, ValueError):
        return  # not a profile (a broken one is replaced, as before)
    if _key(there) != _key(profile):
        raise ProfileError(
            f"{path} holds the {there.mode.value} profile of writer model {there.writer_model!r} "
            f"(prompt {there.prompt_version}), and the one of {profile.writer_model!r} would take "
            "the same file name: refusing to replace it; keep this model's profiles in another "
            "directory"
        )
