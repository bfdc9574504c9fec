"""The no-model backend: deterministic extraction for every role, labelled `extractive`.

Helpers that only this backend needs (relative-date phrasing, pronoun resolution, scoring)
live here rather than in the core."""
