"""Deprecated: the error tree moved to `hymem.core.errors`; import errors from `hymem` itself.

`from hymem.errors import HymemError` worked up to 0.3.0 and still does: every name is the same
class as `hymem.HymemError` and `hymem.core.errors.HymemError`, so `except` clauses keep
catching what they caught. Importing this module warns (`DeprecationWarning`) once per process.
`DatasetFormatError`, a benchmark file's error, now lives in `hymem.evaluation.errors`.
"""

from __future__ import annotations

import warnings

from hymem.core.errors import (
    AuthError,
    ChatExportError,
    CommitConflictError,
    ConfigError,
    EmbedderMismatchError,
    ErasureInProgressError,
    HymemError,
    InvalidMessageError,
    LeaseLostError,
    LLMAuthError,
    LLMContextOverflowError,
    LLMError,
    LLMOutputError,
    LLMRequestError,
    LLMTruncatedError,
    LLMUnavailable,
    NotFoundError,
    ReadOnlyStoreError,
    SchemaVersionError,
    ServerUnavailable,
    StorageFullError,
    StoreClosedError,
    StoreCorruptedError,
    StoreError,
    StoreLockedError,
    StoreUnavailableError,
    UserInputError,
    VersionConflictError,
)
from hymem.evaluation.errors import DatasetFormatError

warnings.warn(
    "hymem.errors is deprecated: import errors from hymem (or hymem.core.errors, where they now "
    "live); DatasetFormatError from hymem.evaluation.errors",
    DeprecationWarning,
    stacklevel=2,  # the importing module: warn() skips the import machinery's frames
)

__all__ = [
    "AuthError",
    "ChatExportError",
    "CommitConflictError",
    "ConfigError",
    "DatasetFormatError",
    "EmbedderMismatchError",
    "ErasureInProgressError",
    "HymemError",
    "InvalidMessageError",
    "LLMAuthError",
    "LLMContextOverflowError",
    "LLMError",
    "LLMOutputError",
    "LLMRequestError",
    "LLMTruncatedError",
    "LLMUnavailable",
    "LeaseLostError",
    "NotFoundError",
    "ReadOnlyStoreError",
    "SchemaVersionError",
    "ServerUnavailable",
    "StorageFullError",
    "StoreClosedError",
    "StoreCorruptedError",
    "StoreError",
    "StoreLockedError",
    "StoreUnavailableError",
    "UserInputError",
    "VersionConflictError",
]
