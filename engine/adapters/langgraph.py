"""hymem as LangGraph's long-term memory store (`pip install 'hymem[langgraph]'`).

`HymemStore` implements `langgraph.store.base.BaseStore`, so `graph.compile(store=HymemStore(
memory))` gives a graph's nodes hymem's memory through `store.put`, `get`, `search`, `delete`
and `list_namespaces` (and their async twins).

Namespaces are hymem scopes: after an optional fixed `prefix` (say `("memories",)`), a namespace
is `(user_id,)`, `(user_id, agent_id)` or `(user_id, agent_id, run_id)`; a search of
`(user_id,)` sees the user's items of every agent and run.

An item is one memory. Its value is a JSON object holding its text in one string field
("text", "content", "memory" or "data", the first present) and any other fields as scalars
(strings up to 512 characters, numbers, booleans), which become the memory's metadata: search
filters apply to them (`{"kind": "pref"}`, `{"score": {"$gt": 3}}`). `put` adds the text as a
turn (its id derived from the namespace, key and value, so a repeated put stores nothing twice)
and stores it at once; putting a new value under a key first deletes the old value's memories
(their versions stay in hymem's history). `get` returns the value as it was put; `search` with a
`query` ranks by hymem's hybrid search over the summaries, without one it lists. TTLs are not
supported (`supports_ttl` is False), and `list_namespaces` lists within one user (a match
condition must name the user: hymem does not enumerate users over its API).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, TypeVar

from hymem.core.errors import UserInputError
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

TEXT_FIELDS = ("text", "content", "memory", "data")
SESSION = "langgraph"  # the hymem session of the items' turns
MARK = "lg_store"  # metadata flag of every item's memories
FIELD = "lg_f_"  # metadata key prefix of a value's other fields
_OPS = {"$eq": "eq", "$ne": "ne", "$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}
PAGE = 200

ItemT = TypeVar("ItemT", bound=Item)  # Item, or SearchItem with its score


class HymemStore(BaseStore):
    """LangGraph's `BaseStore` over one hymem `Memory` or `hymem.client.Client`."""

    supports_ttl = False

    def __init__(self, memory: Any, *, prefix: tuple[str, ...] = ()) -> None:
        self.memory = memory
        self.prefix = tuple(prefix)

    # --- namespaces ----------------------------------------------------------------------
    def _scope(self, namespace: tuple[str, ...]) -> dict[str, Any]:
        """user_id (and agent_id, run_id) of a namespace after the store's prefix."""
        n = len(self.prefix)
        if tuple(namespace[:n]) != self.prefix or not namespace[n:]:
            raise InvalidNamespaceError(
                f"namespace {namespace!r} must be {self.prefix!r} + (user_id[, agent_id[, run_id]])"
            )
        rest = namespace[n:]
        if len(rest) > 3 or not all(isinstance(p, str) and p for p in rest):
            raise InvalidNamespaceError(
                f"namespace {namespace!r}: after {self.prefix!r} at most user, agent and run"
            )
        scope: dict[str, Any] = {"user_id": rest[0]}
        for name, part in zip(("agent_id", "run_id"), rest[1:], strict=False):
            scope[name] = part
        return scope

    # --- the batch ---------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._one(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _one(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op.namespace, op.key)
        if isinstance(op, PutOp):
            if op.value is None:
                self._delete(op.namespace, op.key)
            else:
                self._put(op.namespace, op.key, dict(op.value))
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op)
        raise UserInputError(f"unknown store operation {type(op).__name__}")

    # --- operations --------------------------------------------------------------------------
    def _summaries(self, namespace: tuple[str, ...], key: str) -> list[Any]:
        scope = self._scope(namespace)
        filters = {MARK: True, "lg_ns": _ns(namespace), "lg_key": key}
        page = self.memory.get_all(level="summary", filters=filters, limit=PAGE, **scope)
        return list(page.items)

    def _put(self, namespace: tuple[str, ...], key: str, value: dict[str, Any]) -> None:
        scope = self._scope(namespace)
        field, text, meta = _split(value)
        canon = json.dumps(value, sort_keys=True, ensure_ascii=False)
        turn_id = "lg-" + _digest(_ns(namespace), key, canon)
        held = self._summaries(namespace, key)
        if any(turn_id in s.source_turn_ids for s in held):
            return  # this very value is stored already
        for summary in held:
            self.memory.delete(summary.id, user_id=scope["user_id"])
        metadata = {MARK: True, "lg_ns": _ns(namespace), "lg_key": key, "lg_field": field, **meta}
        self.memory.add(
            [{"id": turn_id, "speaker": "memory", "text": text}],
            session_id=SESSION,
            metadata=metadata,
            **scope,
        )
        self.memory.flush(user_id=scope["user_id"])

    def _delete(self, namespace: tuple[str, ...], key: str) -> None:
        user = self._scope(namespace)["user_id"]
        for summary in self._summaries(namespace, key):
            self.memory.delete(summary.id, user_id=user)

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        held = self._summaries(namespace, key)
        if not held:
            return None
        return self._item(Item, held[0], namespace)

    def _item(
        self, cls: type[ItemT], record: Any, namespace: tuple[str, ...], **extra: Any
    ) -> ItemT:
        """The item a summary (or a search hit on one) of an item's turn stands for: its value
        read back from that turn and the summary's metadata."""
        memory = self.memory.get(record.id, user_id=record.user_id)
        summary = memory.summary
        turn = next((t for t in memory.source_turns if t.id.startswith("lg-")), None)
        meta = dict(summary.metadata)
        value = {str(meta.get("lg_field", "text")): turn.text if turn else summary.text}
        value.update({k[len(FIELD) :]: v for k, v in meta.items() if k.startswith(FIELD)})
        return cls(
            namespace=namespace,
            key=str(meta["lg_key"]),
            value=value,
            created_at=_aware(turn.created_at if turn else summary.created_at),
            updated_at=_aware(summary.updated_at),
            **extra,
        )

    def _search(self, op: SearchOp) -> list[SearchItem]:
        scope = self._scope(op.namespace_prefix)
        filters: dict[str, Any] = {MARK: True, **_filters(op.filter)}
        want = op.offset + op.limit
        found: dict[tuple[str, str], tuple[Any, float | None]] = {}
        if op.query:
            for hit in self.memory.search(
                op.query, k=min(max(want * 3, 10), 1000), filters=filters, **scope
            ):
                ident = (str(hit.metadata.get("lg_ns")), str(hit.metadata.get("lg_key")))
                found.setdefault(ident, (hit, float(hit.fused_score)))
        else:
            cursor = None
            while len(found) < want:
                page = self.memory.get_all(
                    level="summary", filters=filters, limit=PAGE, cursor=cursor, **scope
                )
                for rec in page.items:
                    ident = (str(rec.metadata.get("lg_ns")), str(rec.metadata.get("lg_key")))
                    found.setdefault(ident, (rec, None))
                cursor = page.next_cursor
                if cursor is None:
                    break
        chosen = list(found.items())[op.offset : want]
        return [
            self._item(SearchItem, rec, _parse_ns(ns), score=score)
            for (ns, _), (rec, score) in chosen
        ]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        prefix = next((c.path for c in op.match_conditions or () if c.match_type == "prefix"), None)
        n = len(self.prefix)
        if prefix is None or len(prefix) <= n or "*" in prefix[: n + 1]:
            raise UserInputError(
                "list_namespaces lists one user's namespaces: pass a prefix match condition "
                f"naming the user, e.g. {(*self.prefix, 'alice')!r}"
            )
        scope = self._scope(tuple(prefix[: n + 1]))
        seen: set[tuple[str, ...]] = set()
        cursor = None
        while True:
            page = self.memory.get_all(
                level="summary", filters={MARK: True}, limit=PAGE, cursor=cursor, **scope
            )
            seen.update(_parse_ns(str(r.metadata.get("lg_ns"))) for r in page.items)
            cursor = page.next_cursor
            if cursor is None:
                break
        names = sorted(ns for ns in seen if all(_matches(ns, c) for c in op.match_conditions or ()))
        if op.max_depth is not None:
            names = sorted({ns[: op.max_depth] for ns in names})
        return names[op.offset : op.offset + op.limit]


def _ns(namespace: tuple[str, ...]) -> str:
    return json.dumps(list(namespace), ensure_ascii=False, separators=(",", ":"))


def _parse_ns(text: str) -> tuple[str, ...]:
    return tuple(json.loads(text))


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:24]


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _split(value: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(text field, its text, the other fields as metadata keys prefixed `FIELD`)."""
    if not isinstance(value, dict):
        raise UserInputError("a store value must be a JSON object")
    field = next((f for f in TEXT_FIELDS if isinstance(value.get(f), str)), None)
    if field is None:
        raise UserInputError(
            f"a store value needs its text in one string field: one of {', '.join(TEXT_FIELDS)}"
        )
    meta: dict[str, Any] = {}
    for name, item in value.items():
        if name == field:
            continue
        if isinstance(item, dict | list) or item is None:
            raise UserInputError(
                f"field {name!r}: hymem keeps a value's other fields as metadata, which holds "
                "strings, numbers and booleans only"
            )
        meta[f"{FIELD}{name}"] = item
    return field, value[field], meta


def _filters(spec: dict[str, Any] | None) -> dict[str, Any]:
    """LangGraph's filter ({"kind": "pref"}, {"n": {"$gt": 3}}) on the value's fields."""
    out: dict[str, Any] = {}
    for name, cond in (spec or {}).items():
        if isinstance(cond, dict):
            unknown = set(cond) - set(_OPS)
            if unknown:
                raise UserInputError(f"filter {name!r}: unknown operators {sorted(unknown)}")
            out[f"{FIELD}{name}"] = {_OPS[op]: v for op, v in cond.items()}
        else:
            out[f"{FIELD}{name}"] = cond
    return out


def _matches(ns: tuple[str, ...], cond: Any) -> bool:
    path = tuple(cond.path)
    part = ns[: len(path)] if cond.match_type == "prefix" else ns[-len(path) :]
    return len(part) == len(path) and all(
        p == "*" or p == q for p, q in zip(path, part, strict=True)
    )


__all__ = ["HymemStore"]
