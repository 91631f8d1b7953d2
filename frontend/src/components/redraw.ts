// A canvas picture drawn again at most once per animation frame, however often it is
// asked for, and whenever the theme changes or the observed element is resized (the heat
// strip, the Serving page's iteration strip).

import type { Theme, ThemeWatcher } from './theme';

export class Redraw {
  private frame = 0;
  private readonly unsubscribe: () => void;
  private readonly resize: ResizeObserver | undefined;

  constructor(
    private readonly themes: ThemeWatcher,
    observed: Element,
    private readonly draw: (theme: Theme) => void,
  ) {
    this.unsubscribe = themes.subscribe(() => this.schedule());
    if (typeof ResizeObserver !== 'undefined') {
      this.resize = new ResizeObserver(() => this.schedule());
      this.resize.observe(observed);
    }
    this.schedule();
  }

  /** Draws on the next animation frame (once, however many times it is asked before). */
  schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw(this.themes.current);
    });
  }

  stop(): void {
    cancelAnimationFrame(this.frame);
    this.unsubscribe();
    this.resize?.disconnect();
  }
}
