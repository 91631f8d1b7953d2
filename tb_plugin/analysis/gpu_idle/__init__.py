"""GPU-idle analyses: idle time by cause, queue length (`view.gpu_idle`), and its endpoint
(`endpoint.py`). The launches and launch delays it reads are in core (`core/launches`,
`core/launch_delay`): the Kernels view, graph capture and the trace view read them too."""
