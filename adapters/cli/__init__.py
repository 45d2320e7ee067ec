"""The ``mirage`` command line (entry point ``mirage_guard.adapters.cli:app``).

Every typer command lives here, at the outermost layer (as inspect_ai keeps ``_cli/`` out of its
library): the guard, calibration and benchmark packages have no CLI framework. Sub-apps are
imported lazily, so ``mirage serve`` loads neither scipy nor scikit-learn.
"""

from mirage_guard.adapters.cli._main import app, main

__all__ = ["app", "main"]
