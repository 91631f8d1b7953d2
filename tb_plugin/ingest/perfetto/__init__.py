"""Perfetto protobuf traces (TracePacket / TrackEvent streams) read into the trace model."""
