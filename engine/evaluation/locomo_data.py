"""The LoCoMo loader's former home: it moved to `hymem.backfill.locomo`, below both the backfill
and this harness, which read the dataset alike. Its names stay importable from here."""

from hymem.backfill.locomo import (
    LocomoConversation,
    LocomoQA,
    LocomoSession,
    LocomoTurn,
    conversation_messages,
    load_locomo,
    parse_locomo,
)

__all__ = [
    "LocomoConversation",
    "LocomoQA",
    "LocomoSession",
    "LocomoTurn",
    "conversation_messages",
    "load_locomo",
    "parse_locomo",
]
