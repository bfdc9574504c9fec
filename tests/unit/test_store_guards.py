"""The `Store` serves every port member: written out, or built from `guards.GUARDS`."""

from __future__ import annotations

import inspect

import pytest
from hymem.indexes.lance.trace_table import TraceTable
from hymem.indexes.lance.turn_log import TurnLog
from hymem.indexes.lexical.feed import LexicalFeed
from hymem.indexes.ports import PORTS, Storage, members
from hymem.indexes.store.guards import GUARDS
from hymem.indexes.store.records import RecordReader
from hymem.indexes.store.store import Store

_ATTRIBUTES = {"path", "read_only"}  # set by `Store.__init__`
_WRITTEN = {n for n in vars(Store) if not n.startswith("_")} | _ATTRIBUTES
_PARTS = {
    "_turns": TurnLog,
    "_records": RecordReader,
    "_traces": TraceTable,
    "_sync": LexicalFeed,
}


def test_every_port_member_is_written_out_or_guarded() -> None:
    assert members(*PORTS) - _WRITTEN == set(GUARDS)


def test_no_guarded_member_is_also_written_out() -> None:
    assert set(GUARDS) & _WRITTEN == set()


@pytest.mark.parametrize("name", sorted(GUARDS))
def test_each_guarded_member_is_its_parts_method_with_the_ports_signature(name: str) -> None:
    """The call is forwarded unchanged: the part takes what the port promises, defaults too."""
    guard = GUARDS[name]
    served = getattr(_PARTS[guard.part], guard.method or name)
    assert str(inspect.signature(served)) == str(inspect.signature(getattr(Storage, name)))


def test_an_unknown_name_is_an_attribute_error() -> None:
    store = Store.__new__(Store)
    with pytest.raises(AttributeError, match="no attribute 'get_everything'"):
        store.get_everything  # noqa: B018
