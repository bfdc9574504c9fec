"""Fixtures for the eval tests."""
