"""Shared vocabulary of every layer: records and enums, the exception tree, time, logging,
filters, metadata, configuration and the edge's argument checks."""
