"""One rooted exception tree, so callers can catch hymem's failures and nothing else.

    HymemError
    ├── UserInputError            caller mistakes: bad query, k <= 0, unknown level, bad message
    │   ├── InvalidMessageError   one message of an add() call; names its index
    │   ├── NotFoundError         no record of that id for that user (another user's included)
    │   └── ChatExportError       a chat export (import_chat) not in its format; names where
    ├── ConfigError               inconsistent or unknown configuration, unknown backend spec
    ├── StoreError                the memory folder itself
    │   ├── StoreLockedError      another process holds the writer lock
    │   ├── ReadOnlyStoreError    a write was attempted on a store opened read-only
    │   ├── SchemaVersionError    the folder was written by an incompatible schema version
    │   ├── EmbedderMismatchError the folder was built with another embedder or dimension
    │   ├── StoreCorruptedError   a table, index or file is damaged beyond automatic repair
    │   ├── StoreClosedError      the Memory was used after close()
    │   ├── StorageFullError      the disk or quota is full (ENOSPC, EDQUOT)
    │   ├── StoreUnavailableError an object store (s3://, gs://, az://) kept failing after retries
    │   ├── LeaseLostError        another worker took over this writer's lease on a user
    │   ├── CommitConflictError   a commit that conflicts with what is stored; nothing written
    │   │   ├── VersionConflictError  a memory's versions moved, or do not allow the correction
    │   │   └── ErasureInProgressError  the user is being erased: the call was refused
    │   └── ServerUnavailable     hymem.client: the memory server cannot be reached or answer
    ├── AuthError                 hymem.client: the server refused the API key (401 or 403)
    └── LLMError                  backend failures, always naming the role
        ├── LLMUnavailable        retries exhausted: 429/5xx/timeouts/connection errors
        ├── LLMAuthError          401/403: never retried
        ├── LLMRequestError       other 4xx: never retried
        │   └── LLMContextOverflowError  the prompt does not fit the server's context window
        └── LLMOutputError        the reply never validated and the role has no fallback
            └── LLMTruncatedError  the reply was cut off even at the largest token budget

Caller mistakes are kept apart from backend failures: a UserInputError is always fixable by the
caller, an LLMError never is. `hymem.client` re-raises a server's error as the same class, so
an `except` clause works the same embedded or served; only the two client errors are new.
"""

from __future__ import annotations


class HymemError(Exception):
    """Root of every error hymem raises on purpose."""


class UserInputError(HymemError, ValueError):
    """The caller passed something hymem cannot accept."""


class InvalidMessageError(UserInputError):
    """One message in an add() call is invalid; nothing from that call was written."""

    def __init__(self, index: int, reason: str, message_id: str | None = None) -> None:
        self.index = index
        self.reason = reason
        self.message_id = message_id
        where = f"message {index}" + (f" (id={message_id!r})" if message_id else "")
        super().__init__(f"{where}: {reason}")


class NotFoundError(UserInputError, LookupError):
    """No record with this id belongs to this user. Raised alike for an id that does not
    exist and for one that belongs to another user, so an id never reveals another tenant."""

    def __init__(self, kind: str, record_id: str) -> None:
        self.kind = kind
        self.record_id = record_id
        super().__init__(f"no {kind} {record_id!r} for this user")


class ChatExportError(UserInputError):
    """A chat export given to `import_chat` is not in its format: not JSON, nested too deeply,
    too large, a field of the wrong type, a timestamp out of range, a loop in its message tree,
    a message `add()` would refuse, or one id for two different messages. The message names the
    conversation (or line) and the field. Raised before anything of the file is stored."""


class ConfigError(HymemError, ValueError):
    """Configuration is invalid or names something unknown."""


class StoreError(HymemError):
    """The memory folder cannot be used as asked."""


class StoreLockedError(StoreError):
    """Another process is writing this memory folder."""


class ReadOnlyStoreError(StoreError):
    """A write was attempted on a memory opened read-only."""


class SchemaVersionError(StoreError):
    """The folder's schema version is not one this hymem can read."""


class EmbedderMismatchError(StoreError):
    """The folder's vectors come from another embedder; mixing them would return garbage."""


class StoreCorruptedError(StoreError):
    """A table or index of the folder is damaged; the message names it and what to run.

    Covers LanceDB tables and the derived Tantivy index alike. Damage hymem can repair by
    itself (a derived index, a small file with a copy elsewhere) is repaired and logged instead;
    this is raised only where nothing trustworthy is left to repair from."""


class StoreClosedError(StoreError):
    """The Memory was used after close()."""


class StorageFullError(StoreError):
    """The disk (or quota) holding the memory folder is full. The call that raises it stored
    nothing it did not report: free space and retry; an unfinished commit is settled first."""


class StoreUnavailableError(StoreError):
    """The object store holding the memory (s3://, gs://, az://) could not be reached, or kept
    answering 5xx or timing out, through every bounded retry. Transient: nothing was written by
    the failed call, and the same call may be retried once the store answers again."""


class LeaseLostError(StoreError):
    """This writer's lease on a user was taken over by another worker (it expired, e.g. after a
    long pause of this process), so the write was not made. Retrying the call re-acquires the
    lease and reloads that user's state first, so a retry is always safe."""


class CommitConflictError(StoreError):
    """A segment commit claimed turns another live segment of the user already holds (a
    writer working from a stale view of its pending turns). Nothing was written, so no turn
    ends in two segments; the next flush reads the pending turns afresh.

    Also raised when a concurrent erasure kept pruning the table versions a call was reading
    or committing on through every internal retry: nothing was written; retry the call."""


class VersionConflictError(CommitConflictError):
    """An update, delete or restore found the memory's versions not as the change needs them:
    another correction of the same memory committed first (a writer working from a read that
    is no longer current), the memory has no active version to correct, or the version to
    restore is its active one already. Nothing was written; read the memory again (`get`,
    `history`) and decide afresh. A memory never ends with two active versions."""


class ErasureInProgressError(CommitConflictError):
    """`erase_user` of this user is running in this Memory, so an ask, context or replay of the
    user was refused before it read anything (it would leave a trace and cached model replies
    of the user after the erase). Once the erase returns the user has no memory; a call made
    then starts afresh."""


class ServerUnavailable(StoreError):
    """`hymem.client` could not reach the memory server, or it did not answer in time, or a
    proxy in front of it answered 502/503/504. A StoreError, because the server is where the
    store is: code that handles an unusable store embedded handles an unreachable one served."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        self.status_code = status_code
        super().__init__(message)


class AuthError(HymemError):
    """The memory server refused the API key: 401 (none, or not one it knows) or 403 (a key
    bound to other users). Never retried: the key, not the moment, is wrong."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        self.status_code = status_code
        super().__init__(message)


class LLMError(HymemError):
    """A language-model call failed; `role` says which of hymem's roles was calling."""

    def __init__(
        self,
        message: str,
        *,
        role: str | None = None,
        status_code: int | None = None,
        body: str | None = None,
    ) -> None:
        self.role = role
        self.status_code = status_code
        self.body = body
        prefix = f"[{role}] " if role else ""
        super().__init__(prefix + message)


class LLMUnavailable(LLMError):
    """The backend stayed unavailable through every retry and the deadline."""


class LLMAuthError(LLMError):
    """The backend refused the credentials (401/403)."""


class LLMRequestError(LLMError):
    """The backend rejected the request itself (4xx other than auth and rate limits)."""


class LLMOutputError(LLMError):
    """The model's reply never validated against the role's schema."""


class LLMContextOverflowError(LLMRequestError):
    """The prompt (with the reply's token budget) is larger than the model server's context
    window. Asking again cannot help; a caller falls back or sends a smaller prompt."""


class LLMTruncatedError(LLMOutputError):
    """The reply was cut off at its token budget even at the largest budget hymem allows (or
    the context window left no room for a larger one), so it is not a complete reply."""
