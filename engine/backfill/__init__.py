"""Bulk backfill: many users' histories prepared in parallel (in-process or on Ray) and
committed to one store with the same records, journal and idempotence as `add()`."""
