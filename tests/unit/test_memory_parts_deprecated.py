"""`Memory`'s parts (`store`, `searcher`, `roles`, `embedder`) are private since #48: each old
property still answers for one release but warns, naming what replaces it; the public
replacements and the internal seam (`hymem.testing`'s `store_of`, ...) answer the same."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hymem import Memory, MemoryConfig, StoreClosedError
from hymem.testing import embedder_of, roles_of, searcher_of, store_of


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    config = MemoryConfig.defaults(llm="extractive", embedder="hashing:64")
    with Memory(tmp_path / "m", config=config) as m:
        yield m


@pytest.mark.parametrize(
    ("name", "instead", "seam"),
    [
        ("store", "store_of", store_of),
        ("searcher", "searcher_of", searcher_of),
        ("roles", "roles_of", roles_of),
        ("embedder", "embedder_of", embedder_of),
    ],
)
def test_each_old_property_warns_and_still_answers(
    mem: Memory, name: str, instead: str, seam: object
) -> None:
    with pytest.warns(DeprecationWarning, match=rf"Memory\.{name} is deprecated.*{instead}"):
        part = getattr(mem, name)
    assert callable(seam)
    assert part is seam(mem)


def test_the_public_replacements_answer_what_the_store_did(mem: Memory) -> None:
    mem.add("I adopted a cat named Miso", user_id="alice")
    mem.flush(user_id="alice")
    store = store_of(mem)
    assert mem.users() == store.users() == ["alice"]
    assert mem.read_only is store.read_only is False
    assert mem.reindex(progress=lambda n: None) == {"summary": 1, "segment": 1}
    mem.optimize()
    assert mem.stats(user_id="alice") == store.counts("alice")


def test_the_suite_turns_a_use_of_them_into_an_error(mem: Memory) -> None:
    """pyproject's filterwarnings: hymem's own code and tests never reach through them."""
    with pytest.raises(DeprecationWarning, match=r"Memory\.store is deprecated"):
        mem.store  # noqa: B018


@pytest.mark.parametrize("name", ["store", "roles"])
def test_a_closed_memorys_old_parts_are_refused_as_the_seam_refuses_them(
    tmp_path: Path, name: str
) -> None:
    config = MemoryConfig.defaults(llm="extractive", embedder="hashing:64")
    mem = Memory(tmp_path / "m", config=config)
    mem.close()
    with pytest.warns(DeprecationWarning), pytest.raises(StoreClosedError, match="closed"):
        getattr(mem, name)
