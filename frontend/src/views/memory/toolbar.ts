// The Memory page's toolbar: the device picker, the range shown with Back and Reset zoom,
// and the busy indicator.

import type { MemoryDevice } from '../../api/types';
import { h, replaceChildren } from '../../components/dom';
import { deviceLabel, formatAbsTime, rangeLabel, type TimeRange } from './model';
import { button } from './widgets';

export interface ToolbarHooks {
  onDevice: (device: string) => void;
  onBack: () => void;
  onReset: () => void;
}

export class MemoryToolbar {
  readonly element: HTMLElement;
  private readonly deviceSelect: HTMLSelectElement;
  private readonly rangeText: HTMLElement;
  private readonly backButton: HTMLButtonElement;
  private readonly resetButton: HTMLButtonElement;
  private readonly busy: HTMLElement;

  constructor(hooks: ToolbarHooks) {
    this.deviceSelect = h('select', {
      class: 'ks-select ks-mem-device',
      testid: 'memory-device',
      attrs: { 'aria-label': 'Device' },
      on: { change: () => hooks.onDevice(this.deviceSelect.value) },
    });
    this.rangeText = h('span', { class: 'ks-mem-range', testid: 'memory-range' });
    this.backButton = button('memory-back', '← Back', 'Go back to the previous range', () =>
      hooks.onBack(),
    );
    this.resetButton = button('memory-reset', 'Reset zoom', 'Show the whole trace', () =>
      hooks.onReset(),
    );
    this.busy = h(
      'span',
      { class: 'ks-mem-busy', testid: 'memory-loading', role: 'status' },
      h('span', { class: 'ks-mem-spinner', attrs: { 'aria-hidden': 'true' } }),
      'Loading…',
    );
    this.element = h(
      'div',
      { class: 'ks-mem-toolbar', testid: 'memory-toolbar' },
      h(
        'label',
        { class: 'ks-mem-field' },
        h('span', { class: 'ks-field-label' }, 'Device'),
        this.deviceSelect,
      ),
      h(
        'span',
        { class: 'ks-mem-field ks-mem-range-field' },
        h('span', { class: 'ks-field-label' }, 'Range'),
        this.rangeText,
      ),
      h('span', { class: 'ks-mem-actions' }, this.backButton, this.resetButton),
      this.busy,
    );
  }

  /** The devices to pick from, the one shown, and the range (times relative to `origin`). */
  show(devices: readonly MemoryDevice[], device: string, range: TimeRange | null, origin: number) {
    replaceChildren(
      this.deviceSelect,
      devices.map((d) =>
        h('option', { attrs: { value: d.device, selected: d.device === device } }, deviceLabel(d)),
      ),
    );
    this.deviceSelect.value = device;
    this.deviceSelect.disabled = devices.length < 2;
    this.rangeText.textContent = rangeLabel(range, origin);
    this.rangeText.title = range
      ? `${formatAbsTime(range.start_us)} – ${formatAbsTime(range.end_us)} in the trace`
      : 'No range selected: everything the trace recorded';
  }

  /** Busy or not; Back while there is a range to go back to, Reset while zoomed. */
  setBusy(busy: boolean, canGoBack: boolean, zoomed: boolean): void {
    this.busy.classList.toggle('ks-mem-busy-on', busy);
    this.backButton.disabled = !canGoBack;
    this.resetButton.disabled = !zoomed;
  }

  /** Says whether the server is loading the trace again (it answered 202). */
  setReloading(reloading: boolean): void {
    this.busy.lastChild?.replaceWith(reloading ? 'The trace is loading again…' : 'Loading…');
  }
}
