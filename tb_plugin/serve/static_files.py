"""The built frontend (kinetoscope/static/dist), served by the `static/*` routes.

A clone installed with `pip install .` before `npm run build` has no dist/: TensorBoard
would show a blank tab (its import of the module 404s silently), so an entry module that
is missing is answered by a small module that says in the tab what to run.
"""

from __future__ import annotations

import mimetypes
from importlib import resources
from importlib.abc import Traversable
from typing import Any

from tensorboard import errors
from tensorboard.backend import http_util
from werkzeug import wrappers

# The modules TensorBoard imports first: kinetoscope's tab and the old-links redirect.
ENTRY_MODULES = ("index.js", "old_links.js")

UNBUILT_MODULE = b"""// kinetoscope: served in place of the frontend this install lacks.
export function render() {
  const box = document.createElement('div');
  box.setAttribute('data-testid', 'frontend-not-built');
  box.style.cssText = 'font: 14px/1.5 system-ui, sans-serif; padding: 24px; max-width: 46em';
  box.innerHTML = [
    '<h2>kinetoscope: the frontend is not built</h2>',
    '<p>This copy was installed from a source checkout without its browser code.',
    'In the clone, run:</p>',
    '<pre>npm ci\\nnpm run build</pre>',
    '<p>then, for <code>pip install .</code>, install again (<code>pip install -e .</code>',
    'needs nothing more) and reload this page.</p>',
  ].join(' ');
  document.body.appendChild(box);
}
"""


def dist_root() -> Traversable:
    return resources.files("kinetoscope").joinpath("static", "dist")


def static_file(root: Traversable, rel: str) -> tuple[bytes, str]:
    """The bytes and content type of `rel` under `root`; NotFoundError when absent."""
    parts = [p for p in rel.split("/") if p]
    if not parts or any(p in ("..", ".") or "\\" in p for p in parts):
        raise errors.NotFoundError("no such file")
    node = root.joinpath(*parts)
    if not node.is_file():
        if len(parts) == 1 and parts[0] in ENTRY_MODULES:
            return UNBUILT_MODULE, "text/javascript"
        raise errors.NotFoundError(f"no such file: {rel}")
    content_type = mimetypes.guess_type(parts[-1])[0] or "application/octet-stream"
    if parts[-1].endswith((".js", ".mjs")):
        content_type = "text/javascript"
    return node.read_bytes(), content_type


def respond_static(request: wrappers.Request, plugin_name: str, root: Traversable) -> Any:
    """The answer of a plugin's `static/*` route."""
    prefix = f"/data/plugin/{plugin_name}/static/"
    rel = request.path.split(prefix, 1)[1] if prefix in request.path else ""
    data, content_type = static_file(root, rel)
    return http_util.Respond(request, data, content_type)
