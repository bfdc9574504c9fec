"""CLI commands (store_cmds)."""
