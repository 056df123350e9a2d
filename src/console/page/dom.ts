// The few DOM helpers the console's views are written with: an element
// builder, a table builder and an SVG element builder. Text goes in as text
// nodes, never as HTML, so record keys and values cannot inject markup.

export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | undefined | ((ev: Event) => void)>;

function apply(el: Element, attrs: Attrs): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function append(el: Element, children: readonly Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'number' ? String(c) : c);
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  apply(el, attrs);
  append(el, children);
  return el as SVGElement;
}

export interface Row {
  readonly cells: readonly Child[];
  readonly attrs?: Attrs;
}

/** A table with a header row; `empty` is shown in one cell when there are no rows. */
export function table(attrs: Attrs, headers: readonly string[], rows: readonly Row[], empty = 'none'): HTMLTableElement {
  const body = rows.length === 0
    ? [h('tr', { class: 'empty' }, h('td', { colspan: headers.length }, empty))]
    : rows.map((r) => h('tr', r.attrs ?? {}, ...r.cells.map((c) => h('td', {}, c))));
  return h('table', attrs, h('thead', {}, h('tr', {}, ...headers.map((x) => h('th', {}, x)))), h('tbody', {}, ...body));
}

/** Replaces `el`'s children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}
