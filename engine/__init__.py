"""hymem: hybrid dual-granularity memory for LLM agents.

This module says what users may import; everything else is internal.
"""

from hymem.api.async_memory import AsyncMemory
from hymem.api.memory import Memory
from hymem.backfill.runner import BackfillReport
from hymem.core.config import MemoryConfig
from hymem.core.errors import (
    AuthError,
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
from hymem.core.filters import Filter
from hymem.core.types import (
    AddResult,
    Answer,
    Attribution,
    Hit,
    Level,
    RoleUsage,
    SummaryRecord,
    TurnRecord,
    Usage,
)
from hymem.core.version import __version__
from hymem.imports.chat_import import ChatImportReport
from hymem.manage.audit import AuditReport, SummarySupport, UserAudit
from hymem.manage.erase import ErasureReport
from hymem.manage.models import MemoryItem, Page
from hymem.manage.portable import ExportReport, ImportReport
from hymem.manage.profile import Profile, ProfileFact
from hymem.read.replay import ReadRecord, Replay, ReplaySide
from hymem.read.trace_record import Trace
from hymem.sleep.consolidator import SleepReport

__all__ = [
    "AddResult",
    "Answer",
    "AsyncMemory",
    "Attribution",
    "AuditReport",
    "AuthError",
    "BackfillReport",
    "ChatImportReport",
    "CommitConflictError",
    "ConfigError",
    "EmbedderMismatchError",
    "ErasureInProgressError",
    "ErasureReport",
    "ExportReport",
    "Filter",
    "Hit",
    "HymemError",
    "ImportReport",
    "InvalidMessageError",
    "LLMAuthError",
    "LLMContextOverflowError",
    "LLMError",
    "LLMOutputError",
    "LLMRequestError",
    "LLMTruncatedError",
    "LLMUnavailable",
    "LeaseLostError",
    "Level",
    "Memory",
    "MemoryConfig",
    "MemoryItem",
    "NotFoundError",
    "Page",
    "Profile",
    "ProfileFact",
    "ReadOnlyStoreError",
    "ReadRecord",
    "Replay",
    "ReplaySide",
    "RoleUsage",
    "SchemaVersionError",
    "ServerUnavailable",
    "SleepReport",
    "StorageFullError",
    "StoreClosedError",
    "StoreCorruptedError",
    "StoreError",
    "StoreLockedError",
    "StoreUnavailableError",
    "SummaryRecord",
    "SummarySupport",
    "Trace",
    "TurnRecord",
    "Usage",
    "UserAudit",
    "UserInputError",
    "VersionConflictError",
    "__version__",
]
