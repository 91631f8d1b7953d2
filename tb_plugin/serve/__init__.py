"""Serving: the TensorBoard plugin, its loader entry points and the built frontend."""
