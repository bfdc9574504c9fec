"""Operating hymem: spans (`tracing`), the observers of public calls (`calls`), and what
builds on them (webhooks, metrics, probes, replay)."""
