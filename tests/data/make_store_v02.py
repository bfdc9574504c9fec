"""Build the stored-format fixture: a tiny memory folder written by the 0.2 release's code.

tests/integration/test_stored_format.py opens a copy of tests/data/store_v02/ with the current
code and checks it serves exactly what tests/data/store_v02_expected.json records, so a change
that alters the on-disk format (table schemas, meta.json, the Tantivy index, ids) fails there.

Run ONCE, with the release's code installed, from the repository root, then commit both outputs:

    python tests/data/make_store_v02.py            # refuses to overwrite an existing fixture
    python tests/data/make_store_v02.py --force    # rebuilds it (only for a new format version)

Never rebuild it to make the test pass: a failure there means stores in the field would break.
The folder holds two users (alice: 12 turns in 2 sessions; bob: 4 turns), written with the
extractive backend and the bundled all-MiniLM-L6-v2 (no network), flushed, then slept.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent
FOLDER = DATA / "store_v02"
EXPECTED = DATA / "store_v02_expected.json"

# The config the fixture was written with; the test opens it with the same one.
SETTINGS: dict[str, Any] = {
    "llm": "extractive",
    "sleep_similarity_floor": 0.3,  # low enough that MiniLM queues the refinements below
    "sleep_on_close": False,
}
LEVELS = ("turn", "segment", "summary")
SESSIONS: dict[str, list[tuple[str, str, list[tuple[str, str]]]]] = {
    # user -> [(session id, session start, [(speaker, text), ...])]
    "alice": [
        (
            "s1",
            "2023-05-08T13:56:00",
            [
                ("user", "I adopted a beagle puppy named Rex from the shelter last week."),
                ("assistant", "Congratulations! How is Rex settling in?"),
                ("user", "He chews everything, but he loves the beach near Lisbon."),
                ("assistant", "Beagles love to explore. Do you live in Lisbon?"),
                ("user", "Yes, I moved to Lisbon in 2021 for my job as a nurse."),
                ("assistant", "Nursing is demanding work. Do you get time to relax?"),
            ],
        ),
        (
            "s2",
            "2023-06-20T09:15:00",
            [
                ("user", "I started taking pottery classes on Tuesday evenings."),
                ("assistant", "That sounds relaxing. What have you made so far?"),
                ("user", "A blue bowl for Rex's food, it came out lopsided."),
                ("assistant", "Handmade things have character. Anything else new?"),
                ("user", "I switched jobs, I now work as a nurse at the children's hospital."),
                ("assistant", "That must be rewarding work with the children."),
            ],
        ),
    ],
    "bob": [
        (
            "b1",
            "2023-07-02T18:30:00",
            [
                ("user", "I keep bees on the roof of my apartment in Porto."),
                ("assistant", "How many hives do you have?"),
                ("user", "Three hives, and last summer they made twelve jars of honey."),
                ("assistant", "Twelve jars is a fine harvest for a city roof."),
            ],
        ),
    ],
}
QUERIES: list[tuple[str, str]] = [  # (user, query)
    ("alice", "What is the name of the dog?"),
    ("alice", "Where does she work as a nurse?"),
    ("bob", "How much honey did the bees make?"),
]


def _record(item: Any) -> dict[str, Any]:
    status = getattr(item, "status", None)
    return {"id": item.id, "text": item.text, "status": getattr(status, "value", status)}


def snapshot(mem: Any) -> dict[str, Any]:
    """What the fixture must keep serving: counts, listings at every level, search results."""
    users = sorted(SESSIONS)
    listings: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for user in users:
        listings[user] = {}
        for level in LEVELS:
            page = mem.get_all(user_id=user, level=level, status="all", limit=1000)
            assert page.next_cursor is None
            listings[user][level] = [_record(i) for i in page.items]
    searches = []
    for user, query in QUERIES:
        hits = mem.search(query, user_id=user, k=5)
        searches.append(
            {
                "user_id": user,
                "query": query,
                "hits": [{"id": h.id, "text": h.text} for h in hits],
            }
        )
    return {
        "counts": {user: mem.stats(user_id=user) for user in users},
        "listings": listings,
        "search": searches,
    }


def build(folder: Path) -> dict[str, Any]:
    from hymem import Memory, MemoryConfig
    from hymem.embed.embedders import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    config = MemoryConfig.defaults(**SETTINGS)
    with Memory(folder, config=config, embedder=embedder) as mem:
        for user, sessions in SESSIONS.items():
            for session_id, start, lines in sessions:
                messages = [
                    {"role": role, "content": text, "id": f"{user}-{session_id}-t{i}"}
                    for i, (role, text) in enumerate(lines)
                ]
                mem.add(messages, user_id=user, session_id=session_id, timestamp=start)
            mem.flush(user_id=user)
        mem.sleep()
        expected = snapshot(mem)
    import hymem

    meta = json.loads((folder / "meta.json").read_text())
    expected["written_by"] = {
        "hymem": getattr(hymem, "__version__", "?"),
        "schema_version": meta["schema_version"],
        "embedder": meta["embedder"],
        "settings": SETTINGS,
    }
    return expected


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="replace an existing fixture")
    args = parser.parse_args(argv)
    if FOLDER.exists():
        if not args.force:
            print(f"{FOLDER} exists; pass --force to rebuild it", file=sys.stderr)
            return 1
        shutil.rmtree(FOLDER)
    expected = build(FOLDER)
    # git keeps no empty folders: prune them, so the fixture here is the one a checkout gets
    for sub in sorted(FOLDER.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if sub.is_dir() and not any(sub.iterdir()):
            sub.rmdir()
    EXPECTED.write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {FOLDER} and {EXPECTED}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
