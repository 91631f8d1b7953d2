"""The health view's endpoint: what in the trace cannot be trusted. Its checks and its
response live in `core/health/`, as the Overview reads them too."""
