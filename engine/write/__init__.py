"""The write path: messages -> durable pending turns -> segments -> one summariser call per
buffer -> Level-1 summaries linked to Level-2 segments (`Ingestor`)."""
