"""The Distributed view: every rank of a job, communication, waits and stragglers."""
