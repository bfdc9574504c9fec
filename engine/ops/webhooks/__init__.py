"""Webhooks: signed JSON events from a durable outbox, delivered at least once."""
