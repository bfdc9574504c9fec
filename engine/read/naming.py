"""A question that names the user by their id ("Where does Alice live?", asked for user
`alice`) is about the user. Turns added in the chat format (`{"role": "user", ...}`) are
summarised as "User lives in Lisbon": the name appears nowhere, so retrieval and answering
would match it to whatever sits nearest to a name ("User's sister Maria lives in Berlin").
`as_the_user` says the question as the memory says it ("Where does the user live?"); the reader
uses it only where the memory never names the user itself (turns added with `speaker="Alice"`
are summarised as "Alice ...", and the question already matches them)."""

from __future__ import annotations

import re

USER = "the user"  # how the memory's summaries name the user of chat-format turns


def name_in(question: str, user_id: str) -> str | None:
    """The user id as the question writes it (any case, as a whole word), or None. Only ids
    that read as a name (letters, then letters, digits, `.`, `_`, `-`) can be named."""
    if not re.fullmatch(r"[^\W\d_][\w.-]*", user_id):
        return None
    found = re.search(rf"(?<![\w-]){re.escape(user_id)}(?![\w-])", question, re.IGNORECASE)
    return found.group(0) if found else None


def as_the_user(question: str, user_id: str) -> str:
    """`question` with each mention of `user_id` (a whole word, any case) said as "the user";
    unchanged where it names no user."""
    if name_in(question, user_id) is None:
        return question
    pattern = rf"(?<![\w-]){re.escape(user_id)}(?![\w-])"
    return re.sub(pattern, USER, question, flags=re.IGNORECASE)


__all__ = ["USER", "as_the_user", "name_in"]
