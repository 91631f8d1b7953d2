"""TensorBoard entry point. Kept tiny: TensorBoard imports every plugin loader at start-up,
so the plugin module (numpy, pandas, msgspec) is imported only when the plugin is built."""

from __future__ import annotations

from typing import Any

from tensorboard.plugins import base_plugin


class KinetoscopeLoader(base_plugin.TBLoader):
    _early: Any = None  # the session begun at `fix_flags` (`early_start`)

    def fix_flags(self, flags: Any) -> None:
        from .early_start import EarlyStart, flags_logdir, serves

        if serves(flags):  # the first trace's load begins now, not when the plugin is built
            self._early = EarlyStart(flags_logdir(flags))

    def load(self, context: base_plugin.TBContext) -> Any:
        early, self._early = self._early, None
        if early is not None:
            early.wait()  # its imports over: ours below are never made by two threads
        from .plugin import KinetoscopePlugin

        return KinetoscopePlugin(context, early)


class OldLinksLoader(base_plugin.TBLoader):
    """`#pytorch_profiler` links open our tab, unless the old plugin is installed."""

    def load(self, context: base_plugin.TBContext) -> Any:
        from .old_links import OldLinksPlugin, old_plugin_installed

        return None if old_plugin_installed() else OldLinksPlugin(context)
