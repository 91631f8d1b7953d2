"""The Kernels view: GPU kernels grouped by name or by launching op, with roofline numbers,
launch delays and compiled (Inductor/Triton) sources (`view.py`, `launches.py`,
`compiled.py`), and its endpoint (`endpoint.py`)."""

from .view import VERSION, KernelRow, KernelsView, kernels, kernels_view, supports

__all__ = ["VERSION", "KernelRow", "KernelsView", "kernels", "kernels_view", "supports"]
