"""Fixtures for the reader tests."""
