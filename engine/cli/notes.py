"""What the CLI says beside a command's own output: that turns are pending (not searchable until
flushed) and how to store them now, how long loading the models took (kept apart from a call's
latency, with a pointer to `hymem serve` when it is slow), and what it keeps third-party
libraries from printing."""

from __future__ import annotations

import logging
import os
import re
import shlex
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hymem.api.memory import Memory

# Loading slower than this gets the one-line pointer to `hymem serve`: MiniLM (torch included)
# takes 5-7 s on a 2-core machine, the hashing embedder and a remote model nothing.
LOAD_HINT_S = 1.0

# Read when transformers and huggingface_hub are imported: their progress bars and advisories.
_QUIET_ENV = {
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
}


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 turn`, `2 turns`, `0 summaries` (`many` for an irregular plural)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def pending_note(count: int, user: str, *, buffer_tokens: int | None = None) -> str | None:
    """What pending turns mean and how to store them now; None when nothing is pending.
    `buffer_tokens` adds when they would be stored anyway (for `hymem add`)."""
    if count <= 0:
        return None
    they = "it" if count == 1 else "them"
    when = (
        f" (done by itself once the pending turns reach {buffer_tokens} tokens or the session"
        " changes)"
        if buffer_tokens is not None
        else ""
    )
    return (
        f"{plural(count, 'turn')} of {user} {'is' if count == 1 else 'are'} pending: not"
        f" searchable until flushed{when}; `hymem flush -u {shlex.quote(user)}` stores {they}"
        " now (or add with --flush)"
    )


def unseen_note(mem: Memory, user: str) -> str | None:
    """For a read that found nothing: the user's pending turns, which it could not see."""
    return pending_note(len(mem.pending(user_id=user)), user)


def load_models(mem: Memory, *, roles: bool = False) -> float:
    """Load the embedder (and with `roles` the answering model) now, so that the call timed
    after it is timed alone; the seconds it took (about 0 once loaded)."""
    from hymem.api.internals import embedder_of, roles_of  # hymem's own seam

    started = time.perf_counter()
    embedder_of(mem).embed(["hymem"])  # a lazy model loads on its first text
    if roles:
        roles_of(mem)  # building the roles loads a local model
    return time.perf_counter() - started


def load_note(seconds: float) -> str | None:
    """The pointer to `hymem serve` for a slow load (each command loads the models again)."""
    if seconds < LOAD_HINT_S:
        return None
    return (
        f"loading the models took {seconds:.1f} s: every command loads them again, while"
        " `hymem serve` keeps them loaded between calls"
    )


def silence_third_party() -> None:
    """Third-party progress bars and advisories off for this process (the CLI is the
    application here, so it may set them): transformers draws a "Loading weights" bar on
    every model load, which on `hymem mcp` lands on the agent's stderr. Environment variables
    reach libraries imported later; ones already imported are told through their own API."""
    for name, value in _QUIET_ENV.items():
        os.environ.setdefault(name, value)
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    elif "huggingface_hub" in sys.modules:
        from huggingface_hub.utils.tqdm import disable_progress_bars

        disable_progress_bars()


def mute_pending_warning() -> None:
    """The library logs a warning when a read finds nothing while turns are pending; the CLI
    says so in words instead (`unseen_note`), and a server should not log it per request."""
    logging.getLogger("hymem.api.memory.pending").setLevel(logging.ERROR)


# The library's advice in its errors names Memory's arguments; on the command line the same
# advice is a command or a shell step. (library wording, CLI wording): a test runs each case.
_READERS = "reading commands (search, context, pending, stats, list) work meanwhile"
_CLI_ADVICE: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"open it with read_only=True to read, or close the other writer"),
        f"close the other writer (another `hymem add`, `hymem serve`, `hymem mcp`) to change it;"
        f" {_READERS}",
    ),
    (re.compile(r"close the other writer or open read_only=True"), f"close it; {_READERS}"),
    (
        re.compile(
            r"its parent folder (.+) does not exist \(create it first, or pass create=True"
            r" to make missing folders\)"
        ),
        r"its parent folder \1 does not exist (create it first: mkdir -p \1)",
    ),
    (re.compile(r"\(`Memory\([^`]*\)`, or (`hymem add --store [^`]*`)\)"), r"(\1)"),
)


def cli_wording(message: str) -> str:
    """An error's message with the library's advice (`read_only=True`, `create=True`) said the
    command line's way."""
    for pattern, replacement in _CLI_ADVICE:
        message = pattern.sub(replacement, message)
    return message


def interactive_eval(argv: list[str]) -> bool:
    """`hymem eval ...` on a terminal: long runs where third-party progress may stay."""
    return bool(argv) and argv[0] == "eval" and sys.stderr.isatty()


__all__ = [
    "LOAD_HINT_S",
    "cli_wording",
    "interactive_eval",
    "load_models",
    "load_note",
    "mute_pending_warning",
    "pending_note",
    "plural",
    "silence_third_party",
    "unseen_note",
]
