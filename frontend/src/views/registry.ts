// View id -> view. The shell offers a view only when `status.views` lists its id, so a
// new view (operators, kernels, trace, memory, distributed) plugs in with one line here
// plus its folder under views/.

import { overviewView } from './overview';
import type { ViewDef } from './types';

export const VIEWS: readonly ViewDef[] = [overviewView];

export const VIEW_IDS: readonly string[] = VIEWS.map((v) => v.id);

export function getView(id: string): ViewDef | undefined {
  return VIEWS.find((v) => v.id === id);
}

export function viewLabel(id: string): string {
  return getView(id)?.label ?? id;
}
