"""Model providers behind the `Backend` protocol: who owns the client, key and base URL."""
