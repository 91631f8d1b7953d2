"""TensorBoard entry point. Kept tiny: TensorBoard imports every plugin loader at start-up,
so the plugin module (numpy, pandas, msgspec) is imported only when the plugin is built."""

from __future__ import annotations

from typing import Any

from tensorboard.plugins import base_plugin


class KinetoscopeLoader(base_plugin.TBLoader):
    def load(self, context: base_plugin.TBContext) -> Any:
        from .plugin import KinetoscopePlugin

        return KinetoscopePlugin(context)


class OldLinksLoader(base_plugin.TBLoader):
    """`#pytorch_profiler` links open our tab, unless the old plugin is installed."""

    def load(self, context: base_plugin.TBContext) -> Any:
        from .old_links import OldLinksPlugin, old_plugin_installed

        return None if old_plugin_installed() else OldLinksPlugin(context)
