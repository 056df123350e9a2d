// The whole-cluster simulation's entry point: `startCluster({ seed })` makes
// one seeded world of real nodes (kernel.ts: time and events; node-host.ts:
// one node's real composition on the simulated environment) and hands back
// the SimCluster controls (api.ts) that workloads and fault mixes use.

export * from './api.js';
export { SimKernel, type HostId, type HostTime, type KernelStats } from './kernel.js';
import type { ClusterOptions, SimCluster } from './api.js';

/** Starts a simulated cluster and runs it until a controller leads and every broker is registered. */
export async function startCluster(opts: ClusterOptions): Promise<SimCluster> {
  void opts;
  throw new Error('startCluster: the node host is not wired yet (waiting on the transport and fs seams)');
}
