"""Issue #32 (1): hymem as LangGraph's `BaseStore`, on the real `langgraph` package: put, get,
search (by query and by filter), delete, list_namespaces and their async twins; namespaces as
user/agent/run scopes; a small graph with a scripted chat model that stores a fact through the
store and recalls it in a later run; the REST client in place of a Memory; the docs block."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hymem.adapters.langgraph import HymemStore
from hymem.client import Client
from hymem.core.errors import UserInputError
from hymem.testing import store_of
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError

from tests.backfill_job import open_memory
from tests.doc_blocks import DOCS, blocks
from tests.fixtures_serve import Served

pytestmark = pytest.mark.integration

NS = ("memories", "alice")


def _exercise(store: HymemStore) -> dict[str, Any]:
    store.put(NS, "tea", {"text": "Alice drinks green tea every morning.", "kind": "pref"})
    store.put(NS, "sister", {"text": "Alice's sister Ines teaches piano in Porto.", "kind": "fact"})
    store.put((*NS, "planner"), "table", {"content": "Booked a table for two at Ruby's."})
    out: dict[str, Any] = {"tea": store.get(NS, "tea")}
    out["query"] = [(i.key, i.score) for i in store.search(NS, query="sister piano Porto")]
    out["filter"] = [i.key for i in store.search(NS, filter={"kind": "pref"})]
    out["agent_only"] = [i.key for i in store.search((*NS, "planner"))]
    store.put(NS, "tea", {"text": "Alice switched to coffee.", "kind": "pref"})
    store.put(NS, "tea", {"text": "Alice switched to coffee.", "kind": "pref"})  # a retried put
    out["updated"] = store.get(NS, "tea")
    out["keys"] = sorted(i.key for i in store.search(NS, limit=10))
    store.delete(NS, "sister")
    out["deleted"] = store.get(NS, "sister")
    out["namespaces"] = store.list_namespaces(prefix=NS)
    out["missing"] = store.get(NS, "nothing")
    return out


def _check(out: dict[str, Any]) -> None:
    tea = out["tea"]
    assert tea.value == {"text": "Alice drinks green tea every morning.", "kind": "pref"}
    assert tea.key == "tea" and tea.namespace == NS and tea.created_at.tzinfo is not None
    assert out["query"][0][0] == "sister" and out["query"][0][1] > 0
    assert out["filter"] == ["tea"]
    assert out["agent_only"] == ["table"]
    assert out["updated"].value == {"text": "Alice switched to coffee.", "kind": "pref"}
    assert out["keys"] == ["sister", "table", "tea"]  # one item per key, updates included
    assert out["deleted"] is None and out["missing"] is None
    assert out["namespaces"] == [NS, (*NS, "planner")]


def test_the_store_api_on_a_memory(tmp_path: Path) -> None:
    with open_memory(str(tmp_path / "m")) as mem:
        store = HymemStore(mem, prefix=("memories",))
        _check(_exercise(store))
        versions = store_of(mem).get_summaries("alice", statuses=None)
    assert any(v.status.value == "deleted" for v in versions)  # history kept in hymem


def test_the_store_api_through_the_rest_client(rest_server: Served) -> None:
    with Client(rest_server.url, api_key="ka") as client:
        _check(_exercise(HymemStore(client, prefix=("memories",))))


def test_async_twins_and_refusals(tmp_path: Path) -> None:
    with open_memory(str(tmp_path / "m")) as mem:
        store = HymemStore(mem, prefix=("memories",))

        async def twins() -> tuple[Any, ...]:
            await store.aput(NS, "k", {"memory": "Alice owns a red kayak."})
            item = await store.aget(NS, "k")
            hits = await store.asearch(NS, query="kayak")
            await store.adelete(NS, "k")
            return item, hits, await store.aget(NS, "k")

        item, hits, gone = asyncio.run(twins())
        assert item.value == {"memory": "Alice owns a red kayak."}
        assert [h.key for h in hits] == ["k"] and gone is None
        with pytest.raises(InvalidNamespaceError):
            store.put(("other", "alice"), "k", {"text": "x"})
        with pytest.raises(InvalidNamespaceError):
            store.put((*NS, "agent", "run", "extra"), "k", {"text": "x"})
        with pytest.raises(UserInputError, match="string field"):
            store.put(NS, "k", {"n": 3})
        with pytest.raises(UserInputError, match="metadata"):
            store.put(NS, "k", {"text": "x", "tags": ["a"]})
        with pytest.raises(UserInputError, match="naming the user"):
            store.list_namespaces()


def test_a_graph_stores_a_fact_and_recalls_it_in_a_later_run(tmp_path: Path) -> None:
    fact = "The user's favourite city is Lisbon."
    model = GenericFakeChatModel(
        messages=iter([AIMessage(content=fact), AIMessage(content="You love Lisbon.")])
    )
    seen: list[str] = []

    def remember(state: MessagesState, store: BaseStore) -> dict[str, Any]:
        said = state["messages"][-1].content
        if "remember" in str(said).lower():
            note = model.invoke([HumanMessage(content=f"Extract the fact: {said}")])
            store.put(NS, "city", {"text": str(note.content)})
            return {"messages": [AIMessage(content="Noted.")]}
        return {}

    def answer(state: MessagesState, store: BaseStore) -> dict[str, Any]:
        question = str([m for m in state["messages"] if isinstance(m, HumanMessage)][-1].content)
        if "remember" in question.lower():
            return {}
        found = [i.value["text"] for i in store.search(NS, query=question, limit=3)]
        seen.extend(found)
        reply = model.invoke([HumanMessage(content=f"Memories: {found}\n{question}")])
        return {"messages": [reply]}

    builder = StateGraph(MessagesState)
    builder.add_node("remember", remember)
    builder.add_node("answer", answer)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "answer")
    builder.add_edge("answer", END)
    with open_memory(str(tmp_path / "m")) as mem:
        graph = builder.compile(store=HymemStore(mem, prefix=("memories",)))
        graph.invoke({"messages": [HumanMessage(content="Please remember: I love Lisbon.")]})
        later = graph.invoke({"messages": [HumanMessage(content="Which city do I love?")]})
    assert fact in seen
    assert later["messages"][-1].content == "You love Lisbon."


def test_the_readme_block_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    [block] = blocks("## LangGraph", page=DOCS / "adapters.md")
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "docs/adapters.md LangGraph block", "exec"), {"__name__": "__readme__"})
    assert "Porto" in capsys.readouterr().out
