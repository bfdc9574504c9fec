"""An add()'s arguments, checked once into an `AddRequest` (`add_request`), at the edge: the
`Memory` facade builds it, as do the write path's other callers (backfill, chat import), and
the `Ingestor` takes it as given."""

from __future__ import annotations

from dataclasses import dataclass

from hymem.core.errors import UserInputError
from hymem.core.metadata import Metadata, with_scopes
from hymem.core.time import Clock, parse_time, utcnow
from hymem.core.validation import check_record_id, check_session_id, check_user_id
from hymem.write.messages import Messages, NormalisedMessage, normalise_messages


@dataclass(frozen=True, slots=True)
class AddRequest:
    """One add() call, checked: whose turns, in which session, the messages normalised (each
    with its time: its own, else the call's), the metadata with its scopes in the stored,
    canonical key order, and the request id naming the call (None: the call names none)."""

    user_id: str
    session_id: str
    messages: list[NormalisedMessage]
    metadata: Metadata
    request_id: str | None = None


def add_request(
    messages: Messages,
    *,
    user_id: str,
    session_id: str = "default",
    timestamp: object = None,
    metadata: object = None,
    agent_id: str | None = None,
    run_id: str | None = None,
    request_id: object = None,
    clock: Clock = utcnow,
) -> AddRequest:
    """`Memory.add`'s arguments checked, in this order (the first mistake is the one named):
    the user, the request id, the metadata and its scopes, the session, the call's timestamp
    (`clock()` when None) and the whole list of messages."""
    check_user_id(user_id)
    request = check_request_id(request_id)
    meta = with_scopes(metadata, agent_id=agent_id, run_id=run_id)
    check_session_id(session_id)
    call_time = parse_time(timestamp, "timestamp") if timestamp is not None else clock()
    accepted = normalise_messages(messages, default_time=call_time)
    return AddRequest(
        user_id=user_id,
        session_id=session_id,
        messages=accepted,
        metadata=dict(sorted(meta.items())),
        request_id=request,
    )


def check_request_id(request_id: object) -> str | None:
    """An add()'s request id: None (the call names no request), or an id held to a record
    id's rules (a non-blank string of at most 256 characters, no NUL, encodable), since the
    turn ids of the call are made from it."""
    if request_id is None:
        return None
    if not isinstance(request_id, str) or not request_id.strip():
        raise UserInputError("request_id must be a non-empty string, or None")
    return check_record_id(request_id, "request_id")


__all__ = ["AddRequest", "add_request", "check_request_id"]
