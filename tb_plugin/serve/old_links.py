"""Old links: `#pytorch_profiler`, the tab of the deleted torch-tb-profiler, opens ours.

The PyTorch tutorial and users' bookmarks open TensorBoard at `#pytorch_profiler`; with no
plugin of that name TensorBoard shows "no dashboard". So, unless the old plugin is itself
installed (then it keeps its name: TensorBoard refuses two plugins of one name), we
register that name too: a plugin with no data of its own (never an active tab) whose ES
module (frontend/src/old_links.ts) rewrites the page's hash to our tab.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from tensorboard.plugins import base_plugin
from werkzeug import wrappers

from .static_files import dist_root, respond_static

OLD_PLUGIN_NAME = "pytorch_profiler"
OLD_PLUGIN_MODULE = "torch_tb_profiler"
route: Any = wrappers.Request.application


def old_plugin_installed() -> bool:
    return importlib.util.find_spec(OLD_PLUGIN_MODULE) is not None


class OldLinksPlugin(base_plugin.TBPlugin):
    plugin_name = OLD_PLUGIN_NAME

    def __init__(self, context: base_plugin.TBContext) -> None:
        self.static_root = dist_root()

    def get_plugin_apps(self) -> dict[str, Any]:
        return {"/static/*": self._serve_static}

    def is_active(self) -> bool:
        return False  # no tab of its own: it only forwards old links

    def frontend_metadata(self) -> base_plugin.FrontendMetadata:
        return base_plugin.FrontendMetadata(
            es_module_path="/static/old_links.js", tab_name="PyTorch Profiler (old links)"
        )

    @route
    def _serve_static(self, request: wrappers.Request) -> Any:
        return respond_static(request, OLD_PLUGIN_NAME, self.static_root)
