// Light/dark theme that follows TensorBoard. TensorBoard toggles the class "dark-mode" on
// its own <body> (from its settings menu, or from prefers-color-scheme when set to
// "browser default"). Our iframe reads that class from the parent document and watches
// it; outside TensorBoard it falls back to prefers-color-scheme.

export interface Theme {
  dark: boolean;
  text: string;
  textMuted: string;
  border: string;
  gridLine: string;
  surface: string;
  tooltipBg: string;
}

export const LIGHT: Theme = {
  dark: false,
  text: '#212121',
  textMuted: '#616161',
  border: '#d0d0d0',
  gridLine: '#ebebeb',
  surface: '#ffffff',
  tooltipBg: '#ffffff',
};

export const DARK: Theme = {
  dark: true,
  text: '#f1f1f1',
  textMuted: '#b0b0b0',
  border: '#5f5f5f',
  gridLine: '#4a4a4a',
  surface: '#424242',
  tooltipBg: '#303030',
};

function parentBody(): HTMLElement | null {
  try {
    if (window.parent !== window) return window.parent.document.body;
  } catch {
    // A cross-origin parent: not TensorBoard's own page.
  }
  return null;
}

export function detectDark(): boolean {
  const body = parentBody();
  if (body) return body.classList.contains('dark-mode');
  return window.matchMedia('(prefers-color-scheme: dark)').matches;
}

export type ThemeListener = (theme: Theme) => void;

export class ThemeWatcher {
  current: Theme = LIGHT;
  private readonly listeners = new Set<ThemeListener>();
  private observer: MutationObserver | undefined;
  private media: MediaQueryList | undefined;
  private readonly onMedia = (): void => this.refresh();

  start(): void {
    this.refresh();
    const body = parentBody();
    if (body) {
      this.observer = new MutationObserver(() => this.refresh());
      this.observer.observe(body, { attributes: true, attributeFilter: ['class'] });
    }
    this.media = window.matchMedia('(prefers-color-scheme: dark)');
    this.media.addEventListener('change', this.onMedia);
  }

  stop(): void {
    this.observer?.disconnect();
    this.media?.removeEventListener('change', this.onMedia);
  }

  subscribe(listener: ThemeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private refresh(): void {
    const theme = detectDark() ? DARK : LIGHT;
    document.documentElement.dataset.theme = theme.dark ? 'dark' : 'light';
    if (theme === this.current && document.documentElement.dataset.themeSet) return;
    document.documentElement.dataset.themeSet = '1';
    this.current = theme;
    for (const listener of this.listeners) listener(theme);
  }
}
