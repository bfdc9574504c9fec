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
