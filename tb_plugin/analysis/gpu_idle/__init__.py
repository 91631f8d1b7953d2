"""GPU-idle analyses: idle time by cause, launch delay, queue length (`view.gpu_idle`)."""
