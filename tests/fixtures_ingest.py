"""Fixtures for the ingest tests."""
