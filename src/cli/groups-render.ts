// Text output of `sluice groups`: plain, space-aligned tables (like Kafka's
// kafka-consumer-groups.sh), pure functions of what the GroupAdmin returned.
// --json prints the same data as JSON instead; these are for people.

import type { GroupDescription, GroupListing } from '../client/group-admin.js';

/** Rows of cells → lines with each column padded to its widest cell. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

export function renderGroupList(groups: readonly GroupListing[]): string {
  if (groups.length === 0) return '(no groups)';
  return table(['GROUP', 'STATE', 'PROTOCOL-TYPE'], groups.map((g) => [g.groupId, g.state, g.protocolType || '-']));
}

/** Who owns a partition now, by member id (only known while the group is Stable). */
function owners(g: GroupDescription): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of g.members) {
    for (const tp of m.assignment ?? []) for (const p of tp.partitions) out.set(`${tp.topic}\u0000${p}`, m.memberId);
  }
  return out;
}

export function renderGroupDescription(g: GroupDescription): string {
  const head = `group ${g.groupId}: ${g.state}, protocol ${g.protocol || '-'}, coordinator ${g.coordinator}, ${g.members.length} member(s)`;
  const own = owners(g);
  const offsets = g.offsets.length === 0 ? '(no committed offsets)' : table(
    ['TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LOG-END-OFFSET', 'LAG', 'MEMBER'],
    g.offsets.map((o) => [
      o.topic, String(o.partition), o.committedOffset < 0 ? '-' : String(o.committedOffset), o.logEndOffset < 0 ? '-' : String(o.logEndOffset),
      o.lag === null ? '-' : String(o.lag), own.get(`${o.topic}\u0000${o.partition}`) ?? '-',
    ]),
  );
  const parts = [head, '', offsets];
  if (g.members.length > 0) {
    parts.push('', table(['MEMBER', 'CLIENT-ID', 'HOST', 'ASSIGNMENT'], g.members.map((m) => [
      m.memberId, m.clientId, m.clientHost,
      m.assignment === null ? '-' : m.assignment.map((tp) => `${tp.topic}:${[...tp.partitions].sort((a, b) => a - b).join(',')}`).join(' ') || '(none)',
    ])));
  }
  return parts.join('\n');
}

export interface ResetRow {
  readonly topic: string;
  readonly partition: number;
  /** -1: nothing committed. */
  readonly currentOffset: number;
  readonly newOffset: number;
}

export function renderReset(rows: readonly ResetRow[]): string {
  return table(['TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'NEW-OFFSET'], rows.map((r) => [
    r.topic, String(r.partition), r.currentOffset < 0 ? '-' : String(r.currentOffset), String(r.newOffset),
  ]));
}
