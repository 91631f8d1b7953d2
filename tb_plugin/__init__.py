"""kinetoscope: PyTorch profiler (Kineto) traces in TensorBoard."""

__version__ = "0.1.0"
