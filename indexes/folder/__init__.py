"""A memory in a local folder: the single-writer file lock, meta.json, the doctor's checks and
the opener that assembles a `Store` from folder parts."""
