"""An xdist worker finishes its garbage before it reports finished.

Once a worker reports finished, its controller asks it to exit, and execnet sends a worker still
busy 5 seconds later a SIGINT. pytest's own clean-up collects garbage after that report, so on a
loaded machine the finalisers of a session's leftovers (LanceDB tables, Tantivy readers, model
runtimes) could outlast those seconds: the interrupt then lands in one of them and a passing run
ended with a `PytestUnraisableExceptionWarning ... KeyboardInterrupt`. Collecting here, inside
the session's finish and before xdist's report, leaves that clean-up nothing slow to do.
"""

from __future__ import annotations

import gc

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish() -> None:
    gc.collect()
