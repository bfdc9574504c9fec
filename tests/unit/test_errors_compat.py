"""`hymem.errors`, where the error tree lived up to 0.3.0, still serves every error as the same
class, and warns that the tree moved to `hymem.core.errors`."""

from __future__ import annotations

import importlib
import subprocess
import sys
from types import ModuleType

import hymem
import hymem.core.errors
import pytest
from hymem.evaluation.errors import DatasetFormatError


def _import_fresh() -> ModuleType:
    sys.modules.pop("hymem.errors", None)
    return importlib.import_module("hymem.errors")


def test_the_old_module_warns_and_names_the_new_place() -> None:
    with pytest.warns(DeprecationWarning, match=r"hymem\.core\.errors"):
        _import_fresh()


def test_old_imports_are_the_same_classes() -> None:
    with pytest.warns(DeprecationWarning):
        old = _import_fresh()
    from hymem.errors import HymemError, NotFoundError

    assert HymemError is hymem.HymemError is hymem.core.errors.HymemError
    assert NotFoundError is hymem.NotFoundError
    assert old.DatasetFormatError is DatasetFormatError
    errors = {
        name
        for name, value in vars(hymem.core.errors).items()
        if isinstance(value, type) and issubclass(value, hymem.HymemError)
    }
    assert set(old.__all__) == errors | {"DatasetFormatError"}
    assert all(getattr(old, name) is getattr(hymem.core.errors, name) for name in errors)


def test_a_script_importing_the_old_module_sees_the_warning_by_default() -> None:
    """Python shows a DeprecationWarning without -W only when it names `__main__`."""
    res = subprocess.run(
        [sys.executable, "-c", "from hymem.errors import HymemError"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "<string>:1: DeprecationWarning: hymem.errors is deprecated" in res.stderr
