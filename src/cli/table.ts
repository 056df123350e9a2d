// Plain-text tables for the human output of `sluice` commands: one header
// row, columns padded to their widest cell and separated by two spaces. No
// colours or box drawing, so the output pipes cleanly into grep, awk, cut.
//
// Invariant: every row has exactly as many cells as there are headers.

import { assert } from '../util/assert.js';

export type Cell = string | number | boolean | null | undefined;

const COLUMN_GAP = '  ';

/** Text of one cell: '-' for a missing value. */
export function cellText(c: Cell): string {
  if (c === null || c === undefined || c === '') return '-';
  return String(c);
}

/** A list of numbers as `1,2,3` ('-' when empty). */
export function idList(ids: readonly number[]): string {
  return ids.length === 0 ? '-' : ids.join(',');
}

/** The table as lines joined by '\n' (no trailing newline); the last column is not padded. */
export function renderTable(headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const text = rows.map((r) => {
    assert(r.length === headers.length, `table row has ${r.length} cells for ${headers.length} columns`);
    return r.map(cellText);
  });
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join(COLUMN_GAP).trimEnd();
  return [line(headers), ...text.map(line)].join('\n');
}
