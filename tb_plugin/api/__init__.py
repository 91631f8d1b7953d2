"""The wire contract: the endpoint registry, request parsing and the response types."""
