"""Fixtures for the llm tests."""
