"""Operating hymem: the observers of public calls (`calls`, each call a span through
`hymem.core.tracing`), and what builds on them (webhooks, metrics, probes)."""
