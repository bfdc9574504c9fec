"""The public surface is what `hymem.__all__` says: sorted, importable, and nothing else."""

from __future__ import annotations

import hymem


def test_all_is_sorted_and_unique() -> None:
    names = [n for n in hymem.__all__ if n != "__version__"]
    assert names == sorted(names)
    assert len(set(hymem.__all__)) == len(hymem.__all__)


def test_every_exported_name_exists() -> None:
    for name in hymem.__all__:
        assert hasattr(hymem, name), name


def test_public_names_are_exported() -> None:
    public = {n for n in dir(hymem) if not n.startswith("_")}
    # submodules become attributes on import; they are reachable but not part of __all__
    import types

    public = {n for n in public if not isinstance(getattr(hymem, n), types.ModuleType)}
    assert public <= set(hymem.__all__)


def test_errors_share_one_root() -> None:
    for name in hymem.__all__:
        obj = getattr(hymem, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, hymem.HymemError), name


def _models_in(hint: object) -> set[type]:
    """The pydantic models a return annotation names, looking inside list[...], X | None, ..."""
    from typing import get_args

    from pydantic import BaseModel

    if isinstance(hint, type) and issubclass(hint, BaseModel):
        return {hint}
    return {m for arg in get_args(hint) for m in _models_in(arg)}


def test_every_model_a_public_method_returns_is_exported() -> None:
    """Users must be able to import (and annotate with) whatever `Memory` hands back."""
    import inspect
    from typing import get_type_hints

    returned: set[type] = set()
    for name, fn in inspect.getmembers(hymem.Memory, inspect.isfunction):
        if not name.startswith("_"):
            returned |= _models_in(get_type_hints(fn).get("return"))
    assert returned, "no typed results found"
    missing = sorted(m.__name__ for m in returned if getattr(hymem, m.__name__, None) is not m)
    assert missing == []
