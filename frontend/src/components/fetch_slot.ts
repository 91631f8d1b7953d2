// One fetch lifecycle for a page: a slot holds at most one request in flight; starting
// another aborts it, so a slow old answer can never overwrite a newer one (the stale-
// response guard). Aborts are silent; any other failure goes to `onError`.

import { isAbort } from '../api/client';

export interface FetchSlotHooks {
  /** A request starts (e.g. show a spinner); paired with onEnd. */
  onStart?: () => void;
  onEnd?: () => void;
  onError: (error: unknown) => void;
}

export class FetchSlot {
  private controller: AbortController | undefined;

  constructor(private readonly hooks: FetchSlotHooks) {}

  /** Runs `load` (aborting the slot's previous run); `apply` sees its data only if current. */
  async run<T>(load: (signal: AbortSignal) => Promise<T>, apply: (data: T) => void): Promise<void> {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.hooks.onStart?.();
    try {
      const data = await load(controller.signal);
      if (!controller.signal.aborted) apply(data);
    } catch (error) {
      if (!isAbort(error) && !controller.signal.aborted) this.hooks.onError(error);
    } finally {
      this.hooks.onEnd?.();
    }
  }

  abort(): void {
    this.controller?.abort();
  }
}
