// The Node.js flags a Sluice node runs with, as Kafka's start scripts choose
// the JVM's GC settings. Sluice starts its own nodes with them (sluice local,
// the integration-test and benchmark clusters, fault injection); a node
// started by hand takes them on its command line or in NODE_OPTIONS
// (docs/operations.md).
//
// --v8-pool-size: V8's background threads (concurrent GC marking, sweeping,
// optimizing compilation). Node starts 4. On a 2-core machine shared by three
// nodes and their clients, one node's concurrent marking then took both cores
// for ~10 ms at a time, stalling every other process at once: at 100,000
// records/s end to end that was most of the p99 (docs/performance.md). One
// core is left for the main threads: cores - 1 threads, 1 to 4.

import os from 'node:os';

/** V8 background threads per node for a machine with `cores` cores. */
export function v8PoolSizeFor(cores: number): number {
  return Math.max(1, Math.min(4, cores - 1));
}

/** The node flags for a node on this machine. */
export function serverNodeFlags(cores = os.availableParallelism()): string[] {
  return [`--v8-pool-size=${v8PoolSizeFor(cores)}`];
}
