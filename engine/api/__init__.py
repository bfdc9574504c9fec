"""The public facades: `Memory`, `AsyncMemory`, and how a Memory assembles its parts."""
