"""LanceDB, the source of truth: table access, schema and migrations, SQL fragments built from
escaped literals, and one small module per table (turns, traces, the sleep journal)."""
