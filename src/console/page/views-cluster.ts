// The cluster view (quorum leader and term, each member's lag, brokers and
// their state), reassignments in progress, and the live charts.

import { fill, h, table } from './dom.js';
import { lineChart } from './chart.js';
import { lagSeries, throughputSeries } from './model.js';
import type { Ctx, Snapshot, View } from './context.js';

/** The charts show this many seconds. */
export const CHART_WINDOW_SEC = 120;

function dl(items: ReadonlyArray<[string, string, string | number | null]>): HTMLElement {
  return h('dl', { class: 'summary' }, ...items.flatMap(([id, term, value]) => [h('dt', {}, term), h('dd', { id }, value ?? '–')]));
}

export function clusterView(ctx: Ctx): View {
  const body = h('div', {});
  const charts = h('div', { class: 'charts' });
  const root = h('section', { id: 'view-cluster' }, h('h2', {}, 'Cluster'), body, h('h3', {}, 'Throughput'), charts);
  return {
    root,
    update(s: Snapshot) {
      const c = s.cluster;
      fill(charts, lineChart({ id: 'cluster-throughput', title: 'Records/s per topic', unit: 'rec/s', windowSec: CHART_WINDOW_SEC, series: throughputSeries(ctx.samples) }));
      if (!c) return fill(body, h('p', { class: 'muted' }, 'cluster not described (see the error above)'));
      fill(body,
        dl([
          ['cluster-id', 'Cluster id', c.clusterId],
          ['active-controller', 'Active controller', c.controllerId],
          ['quorum-leader', 'Quorum leader', c.quorumLeader],
          ['quorum-term', 'Term', c.term],
          ['metadata-hw', 'Metadata high watermark', c.metadataHighWatermark],
          ['broker-count', 'Brokers', c.brokers.length],
        ]),
        h('h3', {}, 'Metadata quorum'),
        table({ id: 'quorum' }, ['Node', 'Kind', 'Role', 'Log end', 'Lag', 'Recent contact'], c.quorum.map((q) => ({
          attrs: { 'data-node': q.nodeId, class: q.lag > 0 ? 'lagging' : undefined },
          cells: [q.nodeId, q.kind, q.leader ? 'leader' : 'follower', q.logEndOffset, h('span', { class: 'lag' }, q.lag), q.recentContact ? 'yes' : 'no'],
        }))),
        h('h3', {}, 'Brokers'),
        table({ id: 'brokers' }, ['Broker', 'State', 'Controller', 'Rack', 'WebSocket'], c.brokers.map((b) => ({
          attrs: { 'data-broker': b.nodeId, class: b.state === 'running' ? undefined : 'warn' },
          cells: [b.nodeId, h('span', { class: 'state' }, b.state), b.controller ? 'active' : '', b.rack, b.url],
        }))));
    },
    close() {},
  };
}

export function reassignmentsView(): View {
  const body = h('div', {});
  return {
    root: h('section', { id: 'view-reassignments' }, h('h2', {}, 'Reassignments in progress'), body),
    update(s: Snapshot) {
      if (!s.reassignments) return fill(body, h('p', { class: 'muted' }, 'not listed (see the error above)'));
      fill(body, table({ id: 'reassignments' }, ['Topic', 'Partition', 'Replicas', 'Adding', 'Removing'], s.reassignments.map((r) => ({
        attrs: { 'data-topic': r.topic, 'data-partition': r.partition },
        cells: [r.topic, r.partition, r.replicas.join(', '), r.addingReplicas.join(', '), r.removingReplicas.join(', ')],
      })), 'no reassignment in progress'));
    },
    close() {},
  };
}

export function chartsView(ctx: Ctx): View {
  const body = h('div', { class: 'charts' });
  return {
    root: h('section', { id: 'view-charts' }, h('h2', {}, 'Throughput and lag'), body),
    update() {
      fill(body,
        lineChart({ id: 'chart-throughput', title: 'Records/s per topic (growth of the high watermarks)', unit: 'rec/s', windowSec: CHART_WINDOW_SEC, series: throughputSeries(ctx.samples) }),
        lineChart({ id: 'chart-lag', title: 'Lag per consumer group (records)', unit: 'records', windowSec: CHART_WINDOW_SEC, series: lagSeries(ctx.samples) }));
    },
    close() {},
  };
}
