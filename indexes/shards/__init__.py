"""User-sharded stores: one store's users spread over N complete stores under one URI."""
