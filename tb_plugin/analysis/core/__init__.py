"""The shared floor of analysis: what two or more views (or a view and a higher floor) read —
the op tree, host ranges, launches, device kinds, trusted rows, the kernel taxonomy, work
formulas (roofline), steps, the GPU summary. Imports nothing of the views above it."""
