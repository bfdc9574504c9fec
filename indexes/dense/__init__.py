"""The in-memory exact dense index in front of LanceDB: per-user matrices kept within a byte
budget, with metadata masks, falling back to LanceDB's ANN index past the budget."""
