"""Hatch build hook: install the repository's top-level packages under one import root.

The repository keeps ``guard/ adapters/ benchmark/ calibration/ prompts/`` at its top level, but
generic names like ``adapters`` or ``guard`` already exist on PyPI, so the wheel installs them as
``mirage_guard.guard``, ``mirage_guard.adapters``, ... and nothing else at the top level.

- standard wheel: each package is force-included at ``mirage_guard/<name>``.
- editable install (``pip install -e .``): hatchling cannot rewrite a path prefix in dev mode, so
  the hook makes ``.mirage/devroot/mirage_guard`` a symlink to the checkout and the editable wheel's
  ``.pth`` puts ``.mirage/devroot`` on ``sys.path``: edits are live, imports are the same.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ROOT_PACKAGE = "mirage_guard"
PACKAGES = ("guard", "adapters", "benchmark", "calibration", "prompts")


class MirageGuardRootHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        if version == "editable":
            devroot = root / ".mirage" / "devroot"
            devroot.mkdir(parents=True, exist_ok=True)
            link = devroot / ROOT_PACKAGE
            if link.is_symlink() or link.exists():
                if link.resolve() == root.resolve():
                    return
                link.unlink()
            os.symlink(root, link, target_is_directory=True)
            return
        for name in PACKAGES:
            build_data["force_include"][str(root / name)] = f"{ROOT_PACKAGE}/{name}"
