"""CLI commands (eval_cmds)."""
