"""Errors of the evaluation harnesses, kept out of the library's own tree (`hymem.core.errors`).

    UserInputError                a caller mistake (hymem.core.errors)
    └── DatasetFormatError        a benchmark file that is not in its benchmark's format at all

A `UserInputError`, so the CLI reports it as any caller mistake: one line, exit status 2.
"""

from __future__ import annotations

from hymem.core.errors import UserInputError


class DatasetFormatError(UserInputError):
    """A benchmark file is not in its format at all (not JSON, not a list, no valid item).

    Single bad items of an otherwise valid file are skipped and counted by the harness
    instead, so one damaged question never costs a whole run."""


__all__ = ["DatasetFormatError"]
