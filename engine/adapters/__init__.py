"""hymem inside agent frameworks, each an optional extra: `hymem.adapters.llamaindex`
(`hymem[llamaindex]`)."""
