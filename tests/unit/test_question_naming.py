"""`hymem.read.naming`: a question naming the user by id is asked about "the user"."""

from __future__ import annotations

import pytest
from hymem.read.naming import as_the_user, name_in


@pytest.mark.parametrize(
    ("question", "user_id", "asked"),
    [
        ("Where does Alice live?", "alice", "Where does the user live?"),
        ("What is ALICE's job?", "alice", "What is the user's job?"),
        ("alice: where did I go?", "alice", "the user: where did I go?"),
        ("Where does Alicia live?", "alice", "Where does Alicia live?"),  # another word
        ("Where does Mary-Alice live?", "alice", "Where does Mary-Alice live?"),
        ("Where does Alice live?", "bob", "Where does Alice live?"),  # not the user
        ("Where does u-42 live?", "u-42", "Where does the user live?"),
        ("What did 42 say?", "42", "What did 42 say?"),  # an id that is no name
        ("What is in team/alice?", "team/alice", "What is in team/alice?"),
    ],
)
def test_the_user_named_by_id_becomes_the_user(question: str, user_id: str, asked: str) -> None:
    assert as_the_user(question, user_id) == asked
    assert (name_in(question, user_id) is None) == (asked == question)
