"""CLI commands (sleep_cmds)."""
