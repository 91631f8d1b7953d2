// The Trace page's bottom panel: three tabs (the selected event's details, the search
// results, the selected area's summary), each pane showing a muted note until it has
// something, and a splitter that resizes the panel. A tab clicked again closes the panel.

import { describeError } from '../../api/client';
import { h, replaceChildren, type Children } from '../../components/dom';

export type PanelTab = 'details' | 'search' | 'range';

const TAB_LABELS: Record<PanelTab, string> = {
  details: 'Details',
  search: 'Search results',
  range: 'Selection summary',
};

/** What an empty pane says. */
const EMPTY_NOTES: Record<PanelTab, string> = {
  details: 'Click an event on the timeline to see its details.',
  search: 'Type a name in the search box and press Enter.',
  range: 'Shift+drag on the timeline (or use “Select area”) to sum up a time range.',
};

const TABS = Object.keys(TAB_LABELS) as PanelTab[];
const MIN_HEIGHT_PX = 120;
/** Room left above the panel for the head, toolbar and some timeline. */
const ABOVE_PANEL_PX = 220;

/** A muted line in a pane: that it is empty, or what it is loading. */
export function paneNote(text: string, testid?: string): HTMLElement {
  return h('p', { class: 'ks-muted ks-trace-empty', testid }, text);
}

/** A failed request, said in a pane. */
export function paneError(error: unknown, testid?: string): HTMLElement {
  return h('p', { class: 'ks-error-message', testid }, describeError(error));
}

export class TracePanel {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  private readonly tabs: Record<PanelTab, HTMLButtonElement>;
  private readonly panes: Record<PanelTab, HTMLElement>;
  private current: PanelTab = 'details';
  private height = 300;

  /** `pageHeight` bounds how tall the splitter may make the panel. */
  constructor(private readonly pageHeight: () => number) {
    const tabs = {} as Record<PanelTab, HTMLButtonElement>;
    const panes = {} as Record<PanelTab, HTMLElement>;
    for (const tab of TABS) {
      tabs[tab] = this.tabButton(tab);
      panes[tab] = h(
        'div',
        { class: 'ks-trace-pane', testid: `trace-pane-${tab}` },
        paneNote(EMPTY_NOTES[tab]),
      );
    }
    this.tabs = tabs;
    this.panes = panes;
    this.body = h('div', { class: 'ks-trace-panel-body' }, Object.values(panes));
    const splitter = h('div', {
      class: 'ks-trace-splitter',
      title: 'Drag to resize',
      attrs: { role: 'separator', 'aria-orientation': 'horizontal' },
    });
    this.bindSplitter(splitter);
    this.element = h(
      'div',
      { class: 'ks-trace-panel', testid: 'trace-panel' },
      splitter,
      h('div', { class: 'ks-trace-tabs', attrs: { role: 'tablist' } }, Object.values(tabs)),
      this.body,
    );
    this.show(null);
  }

  isOpen(): boolean {
    return !this.element.classList.contains('ks-closed');
  }

  /** Opens the panel on a tab, or closes it (null). */
  show(tab: PanelTab | null): void {
    if (tab && tab !== this.current) this.body.scrollTop = 0;
    if (tab) this.current = tab;
    this.element.classList.toggle('ks-closed', tab === null);
    this.element.style.height = tab === null ? '' : `${this.height}px`;
    for (const key of TABS) {
      const active = tab === key;
      this.tabs[key].setAttribute('aria-selected', String(active));
      this.tabs[key].classList.toggle('ks-active', active);
      this.panes[key].hidden = !active;
    }
  }

  /** The pane of a tab, for its owner to fill and query. */
  pane(tab: PanelTab): HTMLElement {
    return this.panes[tab];
  }

  fill(tab: PanelTab, ...children: Children[]): void {
    replaceChildren(this.panes[tab], ...children);
  }

  scrollToTop(): void {
    this.body.scrollTop = 0;
  }

  /** Every pane back to its empty note, the panel closed. */
  reset(): void {
    for (const tab of TABS) this.fill(tab, paneNote(EMPTY_NOTES[tab]));
    this.show(null);
  }

  /** The details pane back to its empty note (nothing selected). */
  clearDetails(): void {
    this.fill('details', paneNote(EMPTY_NOTES.details));
  }

  private tabButton(tab: PanelTab): HTMLButtonElement {
    return h(
      'button',
      {
        class: 'ks-trace-tab',
        testid: `trace-tab-${tab}`,
        attrs: { type: 'button', role: 'tab', 'aria-selected': 'false' },
        on: { click: () => this.show(this.current === tab && this.isOpen() ? null : tab) },
      },
      TAB_LABELS[tab],
    );
  }

  private bindSplitter(splitter: HTMLElement): void {
    splitter.addEventListener('pointerdown', (e) => {
      if (!this.isOpen()) return;
      e.preventDefault();
      splitter.setPointerCapture(e.pointerId);
      const y0 = e.clientY;
      const h0 = this.element.getBoundingClientRect().height;
      const move = (ev: PointerEvent): void => {
        const max = this.pageHeight() - ABOVE_PANEL_PX;
        this.height = Math.max(MIN_HEIGHT_PX, Math.min(max, h0 - (ev.clientY - y0)));
        this.element.style.height = `${this.height}px`;
      };
      const up = (): void => {
        splitter.removeEventListener('pointermove', move);
        splitter.removeEventListener('pointerup', up);
      };
      splitter.addEventListener('pointermove', move);
      splitter.addEventListener('pointerup', up);
    });
  }
}
