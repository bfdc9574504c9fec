"""numpy's BLAS runs on one thread during writes and gets its own setting back after."""

from __future__ import annotations

from datetime import datetime

import pytest
from hymem.write.blas import one_blas_thread
from hymem.write.request import add_request
from threadpoolctl import threadpool_info

from tests.fixtures_ingest import WriteFakes, turns


def blas_threads() -> set[int]:
    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


@pytest.fixture
def several_blas_threads() -> None:
    """numpy's BLAS as the application left it must use several threads, or a limit to one
    would not show."""
    if max(blas_threads(), default=1) < 2:
        pytest.skip("numpy's BLAS runs on one thread here already")


@pytest.mark.usefixtures("several_blas_threads")
def test_the_limit_holds_in_the_block_and_is_undone_after() -> None:
    before = blas_threads()
    with one_blas_thread():
        assert blas_threads() == {1}
    assert blas_threads() == before


@pytest.mark.usefixtures("several_blas_threads")
def test_overlapping_writes_restore_the_setting_only_when_the_last_ends() -> None:
    """Two writes overlap, the first ending while the second runs (as two threads' writes
    do): the first must not lift the second's limit, and the last must restore the
    application's setting, not the limit the other one set."""
    before = blas_threads()
    first, second = one_blas_thread(), one_blas_thread()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert blas_threads() == {1}
    second.__exit__(None, None, None)
    assert blas_threads() == before


@pytest.mark.usefixtures("several_blas_threads")
def test_the_write_path_embeds_with_one_blas_thread() -> None:
    fakes = WriteFakes(buffer_tokens=30, segment_max_turns=4)
    during: list[set[int]] = []
    embed = fakes.embedder.embed

    def watching(texts: list[str]) -> object:
        during.append(blas_threads())
        return embed(texts)

    fakes.embedder.embed = watching  # type: ignore[method-assign]  # a spy on the real one
    ing = fakes.ingestor()
    ing.add(add_request(turns(12), user_id="u", session_id="s", timestamp=datetime(2024, 1, 1)))
    ing.flush(user_id="u")
    assert during and all(seen == {1} for seen in during)
    assert max(blas_threads()) >= 2


def test_a_blas_library_loaded_after_the_first_write_is_limited_too() -> None:
    """scipy brings its own OpenBLAS; imported after a first write it must be limited as well
    (a suite run with scipy loaded late saw {1, 2} inside a write)."""
    with one_blas_thread():
        pass
    import scipy.linalg  # noqa: F401  # loads scipy's OpenBLAS, if not loaded yet

    if max(blas_threads(), default=1) < 2:
        pytest.skip("numpy's BLAS runs on one thread here already")
    with one_blas_thread():
        assert blas_threads() == {1}
