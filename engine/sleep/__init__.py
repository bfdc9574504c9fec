"""Sleep-time consolidation: update queues, parallel journaled decisions, versioned apply
(`Consolidator`)."""
