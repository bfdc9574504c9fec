"""CLI commands (read_cmds)."""
