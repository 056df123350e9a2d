// Seeds per second of the cluster simulation: `node dist/test/sim/cluster/rate.js [seconds]`
// (make sim-rate). Each seed boots a cluster, creates a topic, lets it run
// ten simulated seconds with one crash and restart, and stops; the figure
// goes into docs/reliability.md.

import { startCluster } from './cluster.js';
import './sim-world.js';

const SIM_MS = 10_000;

async function oneSeed(seed: number): Promise<number> {
  const c = await startCluster({ seed });
  await c.await(c.createTopic('rate', 3, 3));
  await c.runFor(SIM_MS / 2);
  const victim = c.nodeIds[c.rng.int(c.nodeIds.length)]!;
  c.crash(victim);
  await c.runFor(1_000);
  await c.await(c.restart(victim));
  await c.runFor(SIM_MS / 2);
  const events = c.stats().events;
  await c.stop();
  return events;
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 60);
  const t0 = performance.now();
  let seeds = 0;
  let events = 0;
  while (performance.now() - t0 < seconds * 1000) events += await oneSeed(1000 + seeds++);
  const s = (performance.now() - t0) / 1000;
  console.log(`${seeds} seeds in ${s.toFixed(1)} s: ${(seeds / s).toFixed(2)} seeds/s (${Math.round(seeds / s * 3600)} per hour), ${Math.round(events / s)} events/s`);
}

void main().then(() => process.exit(0), (err: unknown) => {
  console.error(err);
  process.exit(1);
});
