"""Bringing histories from elsewhere: chat exports (ChatGPT, Claude, JSON Lines)."""
