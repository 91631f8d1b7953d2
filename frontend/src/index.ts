// Entry point. TensorBoard loads this module into the plugin's iframe
// (data/plugin_entry.html?name=kinetoscope, whose <base> is data/plugin/kinetoscope/)
// and calls render() once.

import { ApiClient } from './api/client';
import { Shell } from './shell/shell';
import { ThemeWatcher } from './components/theme';
import { UrlStateStore } from './shell/url_state';
import css from './styles.css';

let shell: Shell | undefined;

/** The plugin's route base: this module is served from <base>/static/index.js. */
function apiBase(): string {
  return new URL('../', import.meta.url).toString();
}

export async function render(): Promise<void> {
  if (shell) return;
  const style = document.createElement('style');
  style.dataset.kinetoscope = '';
  style.textContent = css;
  document.head.appendChild(style);
  const meta = document.createElement('meta');
  meta.name = 'color-scheme';
  meta.content = 'light dark';
  document.head.appendChild(meta);

  const themes = new ThemeWatcher();
  themes.start();
  const root = document.createElement('div');
  root.id = 'kinetoscope';
  document.body.appendChild(root);
  shell = new Shell(root, new ApiClient(apiBase()), themes, new UrlStateStore());
  await shell.start();
}
