"""The trace view's backend: tracks, a level-of-detail index, and window queries."""
