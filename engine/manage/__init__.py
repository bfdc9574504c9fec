"""Managing what a memory holds: list, read, correct, delete, erase, export and import.

Each operation is a small component the `Memory` facade builds and delegates to, like the write
path's ingestor and the read path's reader: `Editor` (get, list, update, delete), `Eraser`
(a user's data off the disk for real) and `portable` (JSON Lines export and import)."""
