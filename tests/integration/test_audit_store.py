"""`audit_store` on both stores (issue 30 item 4): a user holding one of each problem the audit
looks for gets a report listing exactly those, and nothing about the sound records beside them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from hymem.core.types import StatusChange, SummaryRecord, SummaryStatus, TurnRecord
from hymem.embed.embedders import HashingEmbedder
from hymem.indexes.memory.store import InMemoryStore
from hymem.indexes.ports import Storage
from hymem.indexes.store.store import Store
from hymem.manage.audit import UNSUPPORTED_BELOW, audit_store, audit_user

from tests.fixtures_store import BASE_TIME, make_segment, make_summary

ANN, BOB = "ann", "bob"
LIVES_IN = {"fact_key": "user|lives_in"}

# (turn id, speaker, text)
ANN_TURNS = [
    ("t0", "Caroline", "I went to an LGBTQ support group yesterday, it was so powerful."),
    ("t1", "Melanie", "We adopted a puppy! His name is Max."),
    ("t2", "user", "I live in Lisbon."),
    ("t3", "user", "I live in Porto now."),
    ("t4", "Caroline", "I work at a bakery downtown."),
    ("t5", "Melanie", "I love painting sunsets."),
]


@pytest.fixture(params=["memory", pytest.param("folder", marks=pytest.mark.integration)])
def store(
    request: pytest.FixtureRequest,
    make_store: Callable[..., Store],
    hashing_embedder: HashingEmbedder,
) -> Storage:
    """The in-memory twin, or the real folder store (LanceDB + Tantivy) under tmp_path."""
    if request.param == "memory":
        return InMemoryStore(hashing_embedder.dim, embedder_name=hashing_embedder.name)
    return make_store()


def _turns(user_id: str, spec: list[tuple[str, str, str]]) -> list[TurnRecord]:
    return [
        TurnRecord(
            id=id_,
            user_id=user_id,
            session_id="s1",
            seq=i,
            speaker=speaker,
            text=text,
            timestamp=BASE_TIME + timedelta(minutes=i),
            created_at=BASE_TIME,
        )
        for i, (id_, speaker, text) in enumerate(spec)
    ]


def _summary(id_: str, text: str, turn: str, **fields: object) -> SummaryRecord:
    return make_summary(ANN, id_, text, source_turn_ids=[turn], **fields)


def _fill_ann(store: Storage) -> None:
    turns = _turns(ANN, ANN_TURNS)
    store.append_turns(turns)
    segment = make_segment(ANN, "seg", turn_ids=[t.id for t in turns])
    ended = BASE_TIME + timedelta(days=3)
    summaries = [
        _summary("good", "Caroline went to an LGBTQ support group on 7 May 2023.", "t0"),
        _summary("invented", "Caroline ran 42 marathons in Tokyo.", "t0"),
        _summary("dup1", "Melanie adopted a puppy named Max.", "t1"),
        _summary("dup2", "A puppy named Max was adopted by Melanie.", "t1"),
        _summary("lisbon", "User lives in Lisbon.", "t2", **LIVES_IN),
        _summary("porto", "User lives in Porto.", "t3", **LIVES_IN),
        _summary("stale", "Caroline works at a bakery downtown.", "t4", valid_to=ended),
        # a sound retired version: ended and superseded as it should be, never served
        _summary("berlin", "User lives in Berlin.", "t2", **LIVES_IN),
    ]
    store.commit_segments(ANN, [segment], summaries, [t.id for t in turns])
    retire = StatusChange(
        summary_id="berlin",
        status=SummaryStatus.SUPERSEDED,
        superseded_by="lisbon",
        valid_to=ended,
    )
    # a summary whose segment was lost (written as a version: a commit would bring the segment)
    orphan = _summary("orphan", "Melanie loves painting sunsets.", "t5", segment_id="lost")
    store.apply_summary_changes(ANN, [orphan], [retire])


def _fill_bob(store: Storage) -> None:
    """A segment listing a turn the store lost, and a summary citing one."""
    turns = _turns(BOB, [("b0", "Bob", "I play the cello.")])
    store.append_turns(turns)
    segment = make_segment(BOB, "bseg", turn_ids=["b0", "ghost"])
    sound = make_summary(BOB, "cello", "Bob plays the cello.", segment_id="bseg")
    cites = make_summary(
        BOB, "cites", "Bob plays the cello.", segment_id="bseg", source_turn_ids=["ghost"]
    )
    store.commit_segments(BOB, [segment], [sound], ["b0"])
    store.apply_summary_changes(BOB, [cites], [])


def test_the_report_lists_exactly_the_planted_problems(store: Storage) -> None:
    _fill_ann(store)
    report = audit_store(store, ANN)
    assert [u.user_id for u in report.users] == [ANN]
    ann = report.users[0]
    assert ann.summaries == 8  # the retired version is not counted
    assert ann.unsupported == 1
    assert ann.worst[0].id == "invented"
    assert ann.worst[0].score < UNSUPPORTED_BELOW
    assert all(s.score >= UNSUPPORTED_BELOW for s in ann.worst[1:])
    active = {"good", "invented", "dup1", "dup2", "lisbon", "porto", "stale", "orphan"}
    assert {s.id for s in ann.worst} == active  # all within the ten listed
    assert ann.duplicate_clusters == [["dup1", "dup2"]]
    assert ann.contradictions == [["lisbon", "porto"]]
    assert ann.stale_served == ["stale"]
    assert ann.unlinked_summaries == ["orphan"]
    assert ann.unlinked_segments == []
    assert not ann.healthy
    assert 0.0 < ann.mean_support < 1.0
    # read two summaries at a time, every batch reading its own links: the same report
    assert audit_user(store, ANN, batch_size=2) == ann


def test_every_user_is_audited_and_lost_turns_are_unlinked(store: Storage) -> None:
    _fill_ann(store)
    _fill_bob(store)
    report = audit_store(store)
    assert [u.user_id for u in report.users] == [ANN, BOB]
    bob = report.users[1]
    assert bob.unlinked_segments == ["bseg"]
    assert bob.unlinked_summaries == ["cites"]
    # the summary citing no turns stands for its segment: the held turn supports it
    assert {s.id: s.score for s in bob.worst} == {"cello": 1.0, "cites": 0.0}
    assert bob.duplicate_clusters == [["cello", "cites"]]
    assert not report.healthy


def test_a_sound_user_is_healthy(store: Storage) -> None:
    turns = _turns(ANN, ANN_TURNS[:2])
    store.append_turns(turns)
    segment = make_segment(ANN, "seg", turn_ids=["t0", "t1"])
    summaries = [
        _summary("good", "Caroline went to an LGBTQ support group on 7 May 2023.", "t0"),
        _summary("pet", "Melanie adopted a puppy named Max.", "t1"),
    ]
    store.commit_segments(ANN, [segment], summaries, ["t0", "t1"])
    report = audit_store(store)
    assert report.healthy
    assert report.users[0].mean_support == 1.0
    assert report.users[0].unsupported == 0
    assert audit_store(store, "nobody").users[0].summaries == 0
