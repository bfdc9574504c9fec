"""Fixtures for the sleep tests."""
