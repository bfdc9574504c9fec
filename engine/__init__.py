"""hymem: hybrid dual-granularity memory for LLM agents.

This module says what users may import; everything else is internal.
"""

from hymem.async_memory import AsyncMemory
from hymem.backfill.runner import BackfillReport
from hymem.config import MemoryConfig
from hymem.errors import (
    AuthError,
    CommitConflictError,
    ConfigError,
    EmbedderMismatchError,
    HymemError,
    InvalidMessageError,
    LeaseLostError,
    LLMAuthError,
    LLMError,
    LLMOutputError,
    LLMRequestError,
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
)
from hymem.filters import Filter
from hymem.imports.chat_import import ChatImportReport
from hymem.manage.audit import AuditReport, SummarySupport, UserAudit
from hymem.manage.erase import ErasureReport
from hymem.manage.models import MemoryItem, Page
from hymem.manage.portable import ExportReport, ImportReport
from hymem.manage.profile import Profile, ProfileFact
from hymem.memory import Memory
from hymem.read.replay import ReadRecord, Replay, ReplaySide
from hymem.read.trace_record import Trace
from hymem.sleep.consolidator import SleepReport
from hymem.types import (
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

__version__ = "0.3.0"

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
    "ErasureReport",
    "ExportReport",
    "Filter",
    "Hit",
    "HymemError",
    "ImportReport",
    "InvalidMessageError",
    "LLMAuthError",
    "LLMError",
    "LLMOutputError",
    "LLMRequestError",
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
    "__version__",
]
