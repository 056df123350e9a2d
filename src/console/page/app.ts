// The web console's entry module. It reads /console/config.json (the
// WebSocket bootstrap list and whether admin actions are on), loads the
// Sluice browser client from /sluice.js, and from then on talks to the
// cluster only through that client over WebSocket: every REFRESH_MS it
// describes the cluster (quorum, brokers, topics with their leaders' log
// dirs, groups with lag, reassignments) into one Snapshot, keeps a window of
// samples for the charts, and hands the snapshot to the view of the current
// route (#cluster, #topics, #topic/NAME, #groups, #reassignments, #charts,
// #produce). A part that fails is shown as an error; the others still update.

import { h, fill } from './dom.js';
import { clusterView as describeClusterView, dialable, groupRow, sampleOf, topicRows, type Sample } from './model.js';
import { errorText, type Admin, type Client, type ConsoleConfig, type Ctx, type Sluice, type Snapshot, type View } from './context.js';
import { loginControls, type Login } from './login.js';
import { chartsView, clusterView, reassignmentsView, CHART_WINDOW_SEC } from './views-cluster.js';
import { produceView, topicsView, topicView } from './views-topics.js';
import { groupsView } from './views-groups.js';

/** How often the console describes the cluster. */
export const REFRESH_MS = 2_000;
/** Samples kept for the charts: their window plus one. */
const SAMPLES_MAX = Math.ceil((CHART_WINDOW_SEC * 1000) / REFRESH_MS) + 1;
/** The browser bundle, served by every node's HTTP listener. */
const BUNDLE_URL = '/sluice.js';

async function part<T>(errors: string[], what: string, read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (err) {
    errors.push(`${what}: ${errorText(err)}`);
    return null;
  }
}

export async function poll(admin: Admin, atMs: number): Promise<Snapshot> {
  const errors: string[] = [];
  const [cluster, topics, groups, reassignments] = await Promise.all([
    part(errors, 'cluster', async () => {
      const [c, q] = await Promise.all([admin.describeCluster(), admin.describeQuorum()]);
      return describeClusterView(c, q);
    }),
    part(errors, 'topics', async () => {
      const names = await admin.listTopics();
      const [descriptions, dirs] = await Promise.all([admin.describeTopics({ topics: names }), admin.describeLogDirs()]);
      for (const d of dirs) if (d.error) errors.push(`log dirs of broker ${d.brokerId}: ${d.error.message}`);
      return topicRows(descriptions, dirs);
    }),
    part(errors, 'groups', async () => {
      const listed = await admin.listGroups();
      return (await admin.describeGroups(listed.map((g) => g.groupId))).map(groupRow);
    }),
    part(errors, 'reassignments', () => admin.listPartitionReassignments()),
  ]);
  return { atMs, cluster, topics, groups, reassignments, errors };
}

const ROUTES: ReadonlyArray<[string, string]> = [
  ['cluster', 'Cluster'], ['topics', 'Topics'], ['groups', 'Groups'], ['reassignments', 'Reassignments'], ['charts', 'Charts'], ['produce', 'Produce'],
];

function viewFor(ctx: Ctx, hash: string): View {
  const [route, ...rest] = hash.replace(/^#/, '').split('/');
  switch (route) {
    case 'topics': return topicsView(ctx);
    case 'topic': return topicView(ctx, decodeURIComponent(rest.join('/')));
    case 'groups': return groupsView(ctx);
    case 'reassignments': return reassignmentsView();
    case 'charts': return chartsView(ctx);
    case 'produce': return produceView(ctx);
    default: return clusterView(ctx);
  }
}

/** What a session needs besides its client: the page's parts and what the node said. */
interface Env {
  readonly sluice: Sluice;
  readonly config: ConsoleConfig;
  readonly bootstrap: readonly string[];
}

interface Session {
  stop(): void;
}

/**
 * One client and its poll loop, routes and views. A login replaces the
 * session (the old client's connections close; the new one authenticates
 * every connection it opens).
 */
function startSession(env: Env, client: Client): Session {
  const { config, sluice } = env;
  const errorsEl = document.getElementById('errors')!;
  const mainEl = document.getElementById('main')!;
  const statusEl = document.getElementById('status')!;
  const samples: Sample[] = [];
  let snapshot: Snapshot | null = null;
  let view: View | null = null;
  let polling: Promise<void> | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let polls = 0;
  let stopped = false;

  const refresh = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    polling ??= (async () => {
      clearTimeout(timer);
      const s = await poll(ctx.admin, Date.now());
      if (stopped) return;
      snapshot = s;
      if (s.topics && s.groups) {
        samples.push(sampleOf(s.atMs, s.topics, s.groups));
        samples.splice(0, Math.max(0, samples.length - SAMPLES_MAX));
      }
      fill(errorsEl, ...s.errors.map((e) => h('p', { class: 'error' }, e)));
      statusEl.textContent = `node ${config.nodeId} · ${env.bootstrap[0]} · ${s.cluster?.clusterId ?? ''} · updated ${new Date(s.atMs).toLocaleTimeString()}`;
      view?.update(s);
      document.body.dataset.polls = String(++polls);
    })().finally(() => {
      polling = null;
      if (!stopped) timer = setTimeout(() => void refresh(), REFRESH_MS);
    });
    return polling;
  };
  const ctx: Ctx = {
    sluice, client, admin: client.admin(), config, refresh,
    get samples() { return samples; },
    get snapshot() { return snapshot; },
  };
  const route = () => {
    view?.close();
    view = viewFor(ctx, location.hash);
    fill(mainEl, view.root);
    const active = location.hash.replace(/^#/, '').split('/')[0] || 'cluster';
    for (const a of document.querySelectorAll<HTMLAnchorElement>('#nav a')) a.classList.toggle('active', a.dataset.route === active || (active === 'topic' && a.dataset.route === 'topics'));
    if (snapshot) view.update(snapshot);
  };
  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearTimeout(timer);
    window.removeEventListener('hashchange', route);
    window.removeEventListener('pagehide', stop);
    view?.close();
    client.close();
  };
  window.addEventListener('hashchange', route);
  window.addEventListener('pagehide', stop);
  document.body.dataset.polls = '0';
  route();
  void refresh();
  return { stop };
}

function newClient(env: Env, sasl: Login | null): Client {
  return new env.sluice.Client({
    bootstrap: [...env.bootstrap], clientId: 'sluice-console', requestTimeoutMs: 10_000, retry: { retries: 2 }, ...(sasl ? { sasl } : {}),
  });
}

async function main(): Promise<void> {
  const errorsEl = document.getElementById('errors')!;
  let config: ConsoleConfig;
  let sluice: Sluice;
  try {
    config = await (await fetch('/console/config.json')).json() as ConsoleConfig;
    sluice = await import(BUNDLE_URL) as Sluice;
  } catch (err) {
    fill(errorsEl, h('p', { id: 'fatal' }, `The console could not start: ${errorText(err)}`));
    return;
  }
  const bootstrap = config.bootstrap.map((u) => dialable(u, location.hostname));
  if (bootstrap.length === 0) {
    fill(errorsEl, h('p', { id: 'fatal' }, 'This node knows no broker to connect to yet; reload once a broker is running.'));
    return;
  }
  const env: Env = { sluice, config, bootstrap };
  document.body.dataset.admin = String(config.admin);
  fill(document.getElementById('nav')!, ...ROUTES.filter(([r]) => r !== 'produce' || config.admin).map(([r, label]) => h('a', { href: `#${r}`, 'data-route': r }, label)));
  let session: Session | null = null;
  const loginBox = loginControls(config, {
    // A login is tried on a fresh client first: only one that works replaces the session.
    tryLogin: async (login) => {
      const client = newClient(env, login);
      try {
        await client.admin().describeCluster();
      } catch (err) {
        client.close();
        throw err;
      }
      session?.stop();
      session = startSession(env, client);
    },
    logout: () => {
      session?.stop();
      session = config.sasl?.required ? null : startSession(env, newClient(env, null));
    },
  });
  if (config.sasl?.required) loginBox.open('this cluster\'s WebSocket listener needs a login');
  else session = startSession(env, newClient(env, null));
}

void main();
