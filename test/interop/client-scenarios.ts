// The scenarios every JSON-line client program (test/interop/java, franz,
// python) runs against the target, so java.test.ts, franz.test.ts and
// python.test.ts check the same things the same way:
//
// - produceAndCheck: N records through the program's idempotent producer;
//   every record acknowledged once, offsets per partition 0..n-1 with no gap
//   or duplicate, and the log end offsets add up to N (nothing written twice).
// - cooperativeGroup: member A joins alone and gets every partition; member
//   B joins and the rebalance is incremental (A gives up some partitions and
//   keeps the rest, B gets what A gave up); then N records are produced and
//   the two members together read each exactly once, keys and headers intact;
//   on stdin EOF both commit and leave, and the group's committed offsets
//   (read back through KafkaJS, another client) equal the log end offsets.
// - adminCreateDelete: the program creates a topic (Metadata shows its
//   partitions and replication factor) and deletes it (Metadata stops
//   listing it).
//
// Events are those the programs print: produced, assigned, revoked, record,
// committed, done, error (see each program's header).

import { expect } from 'chai';
import { waitFor } from '../integration/harness.js';
import {
  committedOffsets, createTopic, jsonLines, runTool, spawnTool, uniqueName, waitForLeaders,
  type KafkaTarget, type LiveTool, type Tool,
} from './kafka-kit.js';

type Event = Record<string, unknown>;

const ofKind = (events: readonly Event[], kind: string): Event[] => events.filter((e) => e.event === kind);

function partitionsIn(e: Event): number[] {
  return (e.partitions as number[] | undefined) ?? [];
}

/** What a member holds after its assigned/revoked events (cooperative callbacks carry only the change). */
function holding(events: readonly Event[]): Set<number> {
  const held = new Set<number>();
  for (const e of events) {
    if (e.event === 'assigned') for (const p of partitionsIn(e)) held.add(p);
    if (e.event === 'revoked') for (const p of partitionsIn(e)) held.delete(p);
  }
  return held;
}

function failureOf(run: { status: number | null; stdout: string; stderr: string; timedOut: boolean }): string {
  return `status ${run.status}${run.timedOut ? ' (timed out)' : ''}\nstdout: ${run.stdout.slice(-3000)}\nstderr: ${run.stderr.slice(-3000)}`;
}

/** Produces `count` records with `tool`; checks acknowledgements and offsets; returns the produced events. */
export async function produceAndCheck(target: KafkaTarget, tool: Tool, topic: string, count: number, prefix: string): Promise<Event[]> {
  const run = await runTool(tool, ['produce', '--bootstrap', target.bootstrap, '--topic', topic, '--count', String(count), '--prefix', prefix]);
  expect(run.status, failureOf(run)).to.equal(0);
  const events = ofKind(jsonLines(run.stdout), 'produced');
  expect(events, 'one acknowledgement per record').to.have.length(count);
  expect(new Set(events.map((e) => e.value)).size, 'each value once').to.equal(count);
  const byPartition = new Map<number, number[]>();
  for (const e of events) byPartition.set(e.partition as number, [...(byPartition.get(e.partition as number) ?? []), e.offset as number]);
  for (const [p, offs] of byPartition) {
    offs.sort((a, b) => a - b);
    expect(offs, `partition ${p}: offsets 0..n-1, no gap or duplicate`).to.deep.equal(offs.map((_, i) => i));
  }
  const ends = await target.admin.fetchTopicOffsets(topic);
  expect(ends.reduce((s, o) => s + Number(o.high), 0), 'log end offsets: nothing written twice').to.equal(count);
  return events;
}

export interface GroupOptions {
  readonly partitions?: number;
  readonly count?: number;
  /** Extra arguments for the consume command (e.g. Java's --count). */
  readonly consumeArgs?: readonly string[];
}

/** Two members of one group with a cooperative rebalance between them; see the header. */
export async function cooperativeGroup(target: KafkaTarget, tool: Tool, label: string, opts: GroupOptions = {}): Promise<void> {
  const partitions = opts.partitions ?? 4;
  const count = opts.count ?? 40;
  const topic = uniqueName(`${label}-group`);
  const group = uniqueName(`${label}-g`);
  await createTopic(target, topic, partitions);
  const consumeArgs = ['consume', '--bootstrap', target.bootstrap, '--topic', topic, '--group', group, ...(opts.consumeArgs ?? [])];
  const a = spawnTool(tool, consumeArgs, { timeoutMs: 180_000 });
  let b: LiveTool | undefined;
  try {
    await a.waitForEvents('member A holds every partition', (evs) => holding(evs).size === partitions);
    const aBefore = a.events.length;
    b = spawnTool(tool, consumeArgs, { timeoutMs: 180_000 });
    const member = b;
    await waitFor('the group split between A and B', () => {
      const ha = holding(a.events);
      const hb = holding(member.events);
      if (ha.size === 0 || hb.size === 0 || ha.size + hb.size !== partitions) return false;
      return [...hb].every((p) => !ha.has(p));
    }, { timeoutMs: 90_000, intervalMs: 100 });
    // Incremental: what A gave up, and only that, went to B; A kept the rest throughout.
    const aRevoked = ofKind(a.events.slice(aBefore), 'revoked').flatMap(partitionsIn);
    expect(aRevoked.length, `A's revocations ${JSON.stringify(aRevoked)}`).to.be.greaterThan(0).and.lessThan(partitions);
    expect(new Set(aRevoked), 'A gave B exactly what B holds').to.deep.equal(holding(b.events));

    await produceAndCheck(target, tool, topic, count, `${label}-grp`);
    const records = () => [...ofKind(a.events, 'record'), ...ofKind(member.events, 'record')];
    await waitFor(`${count} records read by the two members`, () => new Set(records().map((r) => r.value)).size >= count, { timeoutMs: 90_000, intervalMs: 100 });
    a.closeStdin();
    b.closeStdin();
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect(ra.status, `member A: ${failureOf(ra)}`).to.equal(0);
    expect(rb.status, `member B: ${failureOf(rb)}`).to.equal(0);

    const seen = records();
    expect(seen, 'each record read once by one member').to.have.length(count);
    for (const r of seen) {
      const i = (r.value as string).slice(`${label}-grp-`.length);
      expect(r.key, `key of ${String(r.value)}`).to.equal(`key-${i}`);
      const headers = r.headers as Array<{ key: string; value: string }>;
      expect(headers.find((h) => h.key === 'i')?.value, `header i of ${String(r.value)}`).to.equal(i);
    }
    const ends = new Map((await target.admin.fetchTopicOffsets(topic)).map((o) => [o.partition, Number(o.high)]));
    await waitFor('committed offsets = log end offsets', async () => {
      const committed = await committedOffsets(target, group, topic);
      return [...ends].every(([p, end]) => end === 0 || committed.get(p) === end);
    }, { timeoutMs: 30_000, intervalMs: 200 });
  } finally {
    await Promise.all([a.kill(), b?.kill()]);
  }
}

/** Creates and deletes a topic with the program's admin client; checks both through KafkaJS's Metadata. */
export async function adminCreateDelete(target: KafkaTarget, tool: Tool, label: string): Promise<void> {
  const topic = uniqueName(`${label}-admin`);
  const base = ['--bootstrap', target.bootstrap, '--topic', topic];
  const created = await runTool(tool, ['create', ...base, '--partitions', '3', '--replication-factor', String(target.replicationFactor)]);
  expect(created.status, failureOf(created)).to.equal(0);
  expect(ofKind(jsonLines(created.stdout), 'created'), created.stdout).to.have.length(1);
  const leaders = await waitForLeaders(target, topic, 3);
  expect([...leaders.keys()].sort()).to.deep.equal([0, 1, 2]);
  const md = await target.admin.fetchTopicMetadata({ topics: [topic] });
  for (const p of md.topics[0]!.partitions) expect(p.replicas, `partition ${p.partitionId} replicas`).to.have.length(target.replicationFactor);

  const deleted = await runTool(tool, ['delete', ...base]);
  expect(deleted.status, failureOf(deleted)).to.equal(0);
  expect(ofKind(jsonLines(deleted.stdout), 'deleted'), deleted.stdout).to.have.length(1);
  await waitFor(`${topic} gone from Metadata`, async () => !(await target.admin.listTopics()).includes(topic), { timeoutMs: 30_000, intervalMs: 200 });
}
