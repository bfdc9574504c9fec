"""Shared vocabulary of every layer: records and enums, the exception tree, time, logging,
filters, metadata, configuration, the edge's argument checks, spans (tracing) and the version."""
