"""The Kernels view: GPU kernels grouped by name or by launching op, with roofline numbers,
launch delays and compiled (Inductor/Triton) sources (`view.py`, `launches.py`,
`compiled.py`), and its endpoint (`endpoint.py`). Its names are imported from their modules
when first read: importing the endpoint does not import the compute."""

from typing import TYPE_CHECKING

from ..core.endpoint import lazy_exports

if TYPE_CHECKING:
    from .endpoint import VERSION, supports
    from .types import KernelRow, KernelsView
    from .view import kernels, kernels_view

__all__ = ["VERSION", "KernelRow", "KernelsView", "kernels", "kernels_view", "supports"]
__getattr__ = lazy_exports(
    __name__,
    {
        "VERSION": "endpoint",
        "supports": "endpoint",
        "KernelRow": "types",
        "KernelsView": "types",
        "kernels": "view",
        "kernels_view": "view",
    },
)
