"""CLI commands (write_cmds)."""
