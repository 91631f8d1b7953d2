// A tiny element builder: h('div', {class: 'x', testid: 'y'}, child, ...).

export type Child = Node | string | number | null | undefined | false;
export type Children = Child | readonly Children[];

export interface Attrs {
  class?: string;
  /** Sets data-testid. */
  testid?: string;
  dataset?: Record<string, string>;
  style?: string;
  title?: string;
  id?: string;
  role?: string;
  on?: Partial<{ [K in keyof HTMLElementEventMap]: (event: HTMLElementEventMap[K]) => void }>;
  attrs?: Record<string, string | number | boolean | null | undefined>;
}

export function append(parent: Node, children: readonly Children[]): void {
  for (const child of children) {
    if (Array.isArray(child)) {
      append(parent, child as readonly Children[]);
    } else if (child instanceof Node) {
      parent.appendChild(child);
    } else if (typeof child === 'string' || typeof child === 'number') {
      parent.appendChild(document.createTextNode(String(child)));
    }
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Children[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    if (attrs.class) el.className = attrs.class;
    if (attrs.testid) el.dataset.testid = attrs.testid;
    if (attrs.id) el.id = attrs.id;
    if (attrs.title) el.title = attrs.title;
    if (attrs.role) el.setAttribute('role', attrs.role);
    if (attrs.style) el.setAttribute('style', attrs.style);
    if (attrs.dataset) Object.assign(el.dataset, attrs.dataset);
    if (attrs.attrs) {
      for (const [name, value] of Object.entries(attrs.attrs)) {
        if (value === false || value === null || value === undefined) continue;
        el.setAttribute(name, value === true ? '' : String(value));
      }
    }
    if (attrs.on) {
      for (const [type, handler] of Object.entries(attrs.on)) {
        el.addEventListener(type, handler as EventListener);
      }
    }
  }
  append(el, children);
  return el;
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/** Replaces the children of el. */
export function replaceChildren(el: Element, ...children: Children[]): void {
  clear(el);
  append(el, children);
}
