// The Memory page's small controls: its buttons and the debounced search box.

import { h } from '../../components/dom';

const SEARCH_DEBOUNCE_MS = 120;

/** Runs the latest of a burst of calls once the burst has paused for `delayMs`. */
export class Debouncer {
  private timer: ReturnType<typeof setTimeout> | undefined;

  run(action: () => void, delayMs: number): void {
    this.cancel();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      action();
    }, delayMs);
  }

  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

export function button(
  testid: string,
  label: string,
  title: string,
  onClick: () => void,
): HTMLButtonElement {
  return h(
    'button',
    { class: 'ks-mem-button', testid, title, attrs: { type: 'button' }, on: { click: onClick } },
    label,
  );
}

/** A search box calling `onInput` once typing pauses. */
export function searchBox(
  testid: string,
  placeholder: string,
  onInput: (query: string) => void,
): HTMLInputElement {
  const typing = new Debouncer();
  const attrs = { type: 'search', placeholder, 'aria-label': placeholder, spellcheck: 'false' };
  const input = h('input', { class: 'ks-mem-search', testid, attrs });
  input.addEventListener('input', () => typing.run(() => onInput(input.value), SEARCH_DEBOUNCE_MS));
  return input;
}
