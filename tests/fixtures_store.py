"""Fixtures for the store tests."""
