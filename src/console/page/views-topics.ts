// Topics (every partition's leader, replicas, ISR, high watermark, log start,
// size on disk; under-replicated and offline ones flagged), one topic with
// its live tail (the page is a Sluice consumer of the topic, without a
// group), and the produce form (only with --console-admin).

import { fill, h, table, type Child } from './dom.js';
import { formatBytes, isInternalTopic, tailStart, type PartitionRow, type TopicRow } from './model.js';
import { errorText, type Ctx, type Producer, type Snapshot, type View } from './context.js';

/** A tail starts this many records before each partition's high watermark. */
export const TAIL_BACKLOG = 20;
/** Rows the tail keeps (newest first). */
export const TAIL_ROWS_MAX = 100;

const decoder = new TextDecoder();

function bytesText(b: Uint8Array | null): string {
  return b === null ? '∅' : decoder.decode(b);
}

function topicLink(name: string): HTMLElement {
  return h('a', { href: `#topic/${encodeURIComponent(name)}`, class: 'topic-link' }, name);
}

function flags(p: PartitionRow): Child {
  if (p.offline) return h('span', { class: 'flag offline' }, 'offline');
  if (p.underReplicated) return h('span', { class: 'flag under-replicated' }, 'under-replicated');
  return '';
}

function partitionTable(rows: readonly PartitionRow[], withTopic: boolean): HTMLTableElement {
  const headers = [...(withTopic ? ['Topic'] : []), 'Partition', 'Leader', 'Replicas', 'ISR', 'High watermark', 'Log start', 'Size', ''];
  return table({ class: 'partitions' }, headers, rows.map((p) => ({
    attrs: { 'data-topic': p.topic, 'data-partition': p.partition, class: p.offline ? 'offline' : p.underReplicated ? 'under-replicated' : undefined },
    cells: [
      ...(withTopic ? [topicLink(p.topic)] : []), p.partition, h('span', { class: 'leader' }, p.leader >= 0 ? p.leader : 'none'),
      p.replicas.join(', '), h('span', { class: 'isr' }, p.isr.join(', ')), h('span', { class: 'hw' }, p.highWatermark ?? '–'),
      h('span', { class: 'log-start' }, p.logStartOffset ?? '–'), formatBytes(p.sizeBytes), flags(p),
    ],
  })));
}

function electButton(ctx: Ctx, t: TopicRow, status: HTMLElement): Child {
  if (!ctx.config.admin) return null;
  return h('button', {
    class: 'admin elect', 'data-topic': t.name,
    onclick: () => {
      status.textContent = `electing preferred leaders of ${t.name}…`;
      ctx.admin.electLeaders({ partitions: t.partitions.map((p) => ({ topic: t.name, partition: p.partition })) }).then((results) => {
        const failed = results.filter((r) => r.error);
        status.textContent = failed.length === 0 ? `${t.name}: preferred leaders elected` : `${t.name}: ${failed.map((r) => `p${r.partition} ${r.error!.message}`).join('; ')}`;
        return ctx.refresh();
      }).catch((err: unknown) => { status.textContent = `election failed: ${errorText(err)}`; });
    },
  }, 'Elect preferred leaders');
}

/** Whether the topics view lists internal topics too (kept while the page is open). */
let showInternal = false;

export function topicsView(ctx: Ctx): View {
  const body = h('div', {});
  const status = h('p', { class: 'action-status', id: 'topics-action' });
  const toggle = h('input', { type: 'checkbox', id: 'show-internal', checked: showInternal });
  let last: Snapshot | null = null;
  const view: View = {
    root: h('section', { id: 'view-topics' }, h('h2', {}, 'Topics'), h('label', { class: 'muted' }, toggle, ' show internal topics (__consumer_offsets)'), status, body),
    update(s: Snapshot) {
      last = s;
      if (!s.topics) return fill(body, h('p', { class: 'muted' }, 'topics not described (see the error above)'));
      const topics = s.topics.filter((t) => showInternal || !isInternalTopic(t.name));
      const hidden = s.topics.length - topics.length;
      const parts = topics.flatMap((t) => t.partitions);
      const under = parts.filter((p) => p.underReplicated).length;
      fill(body,
        h('p', { id: 'topics-summary' },
          h('span', { id: 'topic-count' }, topics.length), ' topics, ', h('span', { id: 'partition-count' }, parts.length), ' partitions, ',
          h('span', { id: 'under-replicated-count', class: under > 0 ? 'flag under-replicated' : undefined }, under), ' under-replicated',
          hidden > 0 ? ` (${hidden} internal hidden)` : ''),
        table({ id: 'topics' }, ['Topic', 'Partitions', 'Records', 'Size', 'Under-replicated', 'Offline', ''], topics.map((t) => ({
          attrs: { 'data-topic': t.name },
          cells: [topicLink(t.name), t.partitions.length, t.records ?? '–', formatBytes(t.sizeBytes), t.underReplicated, t.offline, electButton(ctx, t, status)],
        })), 'no topics'),
        h('h3', {}, 'Partitions'),
        partitionTable(parts, true));
    },
    close() {},
  };
  toggle.addEventListener('change', () => {
    showInternal = toggle.checked;
    if (last) view.update(last);
  });
  return view;
}

interface TailRow { partition: number; offset: number; timestamp: number; key: string; value: string }

export function topicView(ctx: Ctx, name: string): View {
  const parts = h('div', {});
  const tailBody = h('tbody', {});
  const tailStatus = h('p', { id: 'tail-status', class: 'muted' }, 'starting…');
  const rows: TailRow[] = [];
  let consumer: ReturnType<Ctx['client']['consumer']> | null = null;
  let closed = false;
  const renderTail = () => fill(tailBody, ...rows.map((r) => h('tr', { 'data-partition': r.partition, 'data-offset': r.offset },
    h('td', {}, r.partition), h('td', {}, r.offset), h('td', {}, new Date(r.timestamp).toISOString()), h('td', { class: 'key' }, r.key), h('td', { class: 'value' }, r.value))));
  const startTail = (t: TopicRow) => {
    consumer = ctx.client.consumer({});
    consumer.assign(t.partitions.map((p) => ({ topic: name, partition: p.partition, offset: tailStart(p, TAIL_BACKLOG) })));
    consumer.run({
      eachMessage: async ({ partition, message }) => {
        rows.unshift({ partition, offset: message.offset, timestamp: message.timestamp, key: bytesText(message.key), value: bytesText(message.value) });
        rows.length = Math.min(rows.length, TAIL_ROWS_MAX);
        renderTail();
        tailStatus.textContent = `following ${t.partitions.length} partitions`;
      },
    }).catch((err: unknown) => { if (!closed) tailStatus.textContent = `tail stopped: ${errorText(err)}`; });
    tailStatus.textContent = `following ${t.partitions.length} partitions (from up to ${TAIL_BACKLOG} records back)`;
  };
  return {
    root: h('section', { id: 'view-topic', 'data-topic': name },
      h('h2', {}, 'Topic ', h('span', { id: 'topic-name' }, name)), parts,
      h('h3', {}, 'Live tail'), tailStatus,
      h('table', { id: 'tail' }, h('thead', {}, h('tr', {}, ...['Partition', 'Offset', 'Timestamp', 'Key', 'Value'].map((x) => h('th', {}, x)))), tailBody)),
    update(s: Snapshot) {
      const t = s.topics?.find((x) => x.name === name);
      if (!t) return fill(parts, h('p', { class: 'muted' }, s.topics ? `no topic ${name}` : 'topics not described'));
      fill(parts, partitionTable(t.partitions, false));
      if (!consumer && !closed && t.partitions.every((p) => p.highWatermark !== null)) startTail(t);
    },
    close() {
      closed = true;
      void consumer?.close().catch(() => undefined);
    },
  };
}

export function produceView(ctx: Ctx): View {
  if (!ctx.config.admin) {
    return {
      root: h('section', { id: 'view-produce' }, h('h2', {}, 'Produce'),
        h('p', { id: 'produce-refused', class: 'refused' }, 'The produce form is off: this console is read-only. Start the node with --console-admin (console.admin.enable=true) to enable it.')),
      update() {},
      close() {},
    };
  }
  let producer: Producer | null = null;
  const topic = h('select', { name: 'topic', id: 'produce-topic', required: true });
  const partition = h('input', { name: 'partition', id: 'produce-partition', type: 'number', min: 0, placeholder: 'any' });
  const key = h('input', { name: 'key', id: 'produce-key', placeholder: '(none)' });
  const value = h('textarea', { name: 'value', id: 'produce-value', rows: 3 });
  const result = h('p', { id: 'produce-result', class: 'action-status' });
  const form = h('form', { id: 'produce-form' },
    h('label', {}, 'Topic ', topic), h('label', {}, 'Partition ', partition), h('label', {}, 'Key ', key), h('label', {}, 'Value ', value),
    h('button', { type: 'submit', class: 'admin' }, 'Send'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    producer ??= ctx.client.producer({});
    const p = partition.value === '' ? undefined : Number(partition.value);
    result.textContent = 'sending…';
    producer.send({ topic: topic.value, messages: [{ key: key.value === '' ? null : key.value, value: value.value, ...(p === undefined ? {} : { partition: p }) }] })
      .then(([meta]) => {
        result.textContent = `written to ${meta!.topic} partition ${meta!.partition} at offset ${meta!.offset}`;
        result.dataset.offset = String(meta!.offset);
        result.dataset.partition = String(meta!.partition);
      })
      .catch((err: unknown) => { result.textContent = `not written: ${errorText(err)}`; });
  });
  return {
    root: h('section', { id: 'view-produce' }, h('h2', {}, 'Produce'), form, result),
    update(s: Snapshot) {
      const names = (s.topics ?? []).map((t) => t.name);
      const current = [...topic.options].map((o) => o.value);
      if (names.join('\n') === current.join('\n')) return;
      const chosen = topic.value;
      fill(topic, ...names.map((n) => h('option', { value: n, selected: n === chosen }, n)));
    },
    close() {
      void producer?.close().catch(() => undefined);
    },
  };
}
