"""`hymem` command line: one module per group of commands, registered on one typer app."""

from __future__ import annotations

import os
import sys

from hymem.cli import (  # noqa: F401  (importing registers the commands)
    backfill_cmds,
    eval_cmds,
    manage_cmds,
    mcp_cmds,
    read_cmds,
    replay_cmds,
    serve_cmds,
    sleep_cmds,
    store_cmds,
    webhook_cmds,
    write_cmds,
)
from hymem.cli.app import app
from hymem.core.errors import HymemError

# The width rich lays tables out in when stdout is not a terminal (it reads COLUMNS when it
# prints): wide enough for every header of `hymem audit` and `hymem search`.
PIPED_COLUMNS = 200


def main() -> None:
    """Entry point: hymem's own errors print one clear line and exit 2, not a traceback.
    Third-party progress bars stay off except on an interactive `hymem eval`."""
    from hymem.cli.notes import (
        cli_wording,
        interactive_eval,
        mute_pending_warning,
        silence_third_party,
    )
    from hymem.core.logging import configure_logging

    configure_logging(os.environ.get("HYMEM_LOG_LEVEL", "warning"))
    # Piped tables as wide as they need, never cut to 80 columns (help text keeps its width).
    piped = not sys.stdout.isatty() and not {"--help", "-h"} & set(sys.argv[1:])
    if piped and not os.environ.get("COLUMNS", "").isdigit():
        os.environ["COLUMNS"] = str(PIPED_COLUMNS)
    mute_pending_warning()
    if not interactive_eval(sys.argv[1:]):
        silence_third_party()
    try:
        app()
    except HymemError as exc:
        print(f"hymem: error: {cli_wording(str(exc))}", file=sys.stderr)
        sys.exit(2)


__all__ = ["app", "main"]
