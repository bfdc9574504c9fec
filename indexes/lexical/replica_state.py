"""What a lexical replica (`replica.py`) has indexed, on the worker's local disk.

Two parts, so that a catch-up writes in proportion to what changed, not to the store's size:

* `state_file` (JSON, small): per table the LanceDB version matched and, per fragment, its data
  files, its deletion-file marker, how many documents it gave, and the name of its key file;
* `<state_file>.keys/`: one Arrow IPC file per fragment state, the (offset, user_id, id) of
  each row indexed from it and `replica.digest` of its document (to tell a row moved from a
  row rewritten). A key file is never changed: a fragment whose deletion file changed gets a
  new one, and files no state names are removed after the state is written.

Every write is atomic (write, fsync, rename). Anything missing, unreadable or of another
format makes `load` return None, and the replica rebuilds.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc
from hymem.core.errors import StoreCorruptedError
from hymem.indexes.jsonfile import read_json, write_json_atomic
from hymem.indexes.lance.fragments import Fragment
from hymem.indexes.lexical.index import LEXICAL_SCHEMA_VERSION

STATE_FORMAT = 1
KEYS_SCHEMA = pa.schema(
    [
        ("offset", pa.uint32()),
        ("user_id", pa.string()),
        ("id", pa.string()),
        ("digest", pa.uint64()),
    ]
)


@dataclass(frozen=True, slots=True)
class FragRecord:
    """One fragment as the index reflects it."""

    files: tuple[str, ...]
    deletion: str | None
    keys: str  # key file name in the keys folder
    rows: int  # documents indexed from it and still live


@dataclass(frozen=True)
class TableRecord:
    version: int
    fragments: dict[int, FragRecord]


def _parse_table(raw: dict[str, Any]) -> TableRecord:
    frags = {
        int(fid): FragRecord(tuple(str(p) for p in f["files"]), f["deletion"], f["keys"], f["rows"])
        for fid, f in raw["fragments"].items()
    }
    for f in frags.values():
        if not isinstance(f.keys, str) or not isinstance(f.rows, int) or f.rows < 0:
            raise ValueError("bad fragment record")
        if f.deletion is not None and not isinstance(f.deletion, str):
            raise ValueError("bad deletion marker")
    version = raw["version"]
    if not isinstance(version, int) or version < 0:
        raise ValueError("bad version")
    return TableRecord(version, frags)


class ReplicaState:
    """The state file and its key folder."""

    def __init__(self, state_file: Path) -> None:
        self.file = state_file
        self.keys_dir = state_file.with_name(state_file.name + ".keys")

    def load(self, tables: tuple[str, ...]) -> dict[str, TableRecord] | None:
        """The recorded state, or None when it cannot be trusted (missing, garbage, another
        format or lexical schema, a key file missing)."""
        try:
            raw = read_json(self.file)
        except StoreCorruptedError:
            return None
        if raw is None or raw.get("format") != STATE_FORMAT:
            return None
        if raw.get("lexical_schema_version") != LEXICAL_SCHEMA_VERSION:
            return None
        try:
            records = {name: _parse_table(raw["tables"][name]) for name in tables}
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        for rec in records.values():
            if any(not (self.keys_dir / f.keys).is_file() for f in rec.fragments.values()):
                return None
        return records

    def save(self, records: dict[str, TableRecord]) -> None:
        """Record the state, then drop key files it no longer names."""
        data = {
            "format": STATE_FORMAT,
            "lexical_schema_version": LEXICAL_SCHEMA_VERSION,
            "tables": {
                name: {
                    "version": rec.version,
                    "fragments": {
                        str(fid): {
                            "files": list(f.files),
                            "deletion": f.deletion,
                            "keys": f.keys,
                            "rows": f.rows,
                        }
                        for fid, f in sorted(rec.fragments.items())
                    },
                }
                for name, rec in records.items()
            },
        }
        write_json_atomic(self.file, data)
        named = {f.keys for rec in records.values() for f in rec.fragments.values()}
        for path in self.keys_dir.iterdir():
            if path.name not in named:
                path.unlink(missing_ok=True)

    def reset(self) -> None:
        """Forget everything (before a rebuild): a crash midway then leaves no state."""
        self.file.unlink(missing_ok=True)
        if self.keys_dir.exists():
            shutil.rmtree(self.keys_dir)
        self.keys_dir.mkdir(parents=True)

    def write_keys(self, table: str, frag: Fragment, keys: pa.Table) -> FragRecord:
        """Store the keys indexed from `frag` as it is now; returns its record."""
        ident = hashlib.blake2b(repr((frag.files, frag.deletion)).encode(), digest_size=8)
        name = f"{table}-{frag.id}-{ident.hexdigest()}.arrow"
        self.keys_dir.mkdir(parents=True, exist_ok=True)
        path = self.keys_dir / name
        tmp = path.with_name(name + ".tmp")
        with open(tmp, "wb") as fh:
            with ipc.new_file(fh, KEYS_SCHEMA) as writer:
                writer.write_table(keys.cast(KEYS_SCHEMA))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        return FragRecord(frag.files, frag.deletion, name, keys.num_rows)

    def read_keys(self, rec: FragRecord) -> pa.Table:
        """The keys of a fragment record; StoreCorruptedError when its file is gone or bad."""
        try:
            with pa.OSFile(str(self.keys_dir / rec.keys), "rb") as source:
                table = ipc.open_file(source).read_all()
        except (OSError, pa.ArrowInvalid) as exc:
            raise StoreCorruptedError(f"replica key file {rec.keys}: {exc}") from exc
        if table.schema != KEYS_SCHEMA or table.num_rows != rec.rows:
            raise StoreCorruptedError(f"replica key file {rec.keys} does not match its record")
        return table


def empty_keys() -> pa.Table:
    return KEYS_SCHEMA.empty_table()


__all__ = ["KEYS_SCHEMA", "FragRecord", "ReplicaState", "TableRecord", "empty_keys"]
