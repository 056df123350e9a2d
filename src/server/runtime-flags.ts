// The Node.js flags a Sluice node runs with, as Kafka's start scripts choose
// the JVM's heap and GC settings (-Xms, -XX:...). Sluice starts its own nodes
// with them (sluice local, the integration-test and benchmark clusters, fault
// injection); a node started by hand takes them on its command line or in
// NODE_OPTIONS (docs/operations.md). Measured in docs/performance.md.
//
// --initial-old-space-size=128 (MiB): a broker moves tens of MB/s through
// Buffers, whose memory V8 counts toward the old generation's limit. With
// V8's small starting limit that forced a full mark-compact every ~60 ms on
// a leader taking 50 MB/s, which was more CPU than the produce path itself
// (RF=3 acks=all, 1 KiB records: 3.1 instead of 7.5 CPU-seconds for 300,000
// records, with the flag). The heap still collects as it fills; the flag
// only lets it start larger, as -Xms does.
//
// --v8-pool-size: V8's background threads (concurrent GC marking, sweeping,
// optimizing compilation). Node starts 4. On a 2-core machine shared by three
// nodes and their clients, one node's concurrent marking then took both cores
// for ~10 ms at a time, stalling every other process at once. One core is
// left for the main threads: cores - 1 threads, 1 to 4.

import os from 'node:os';

/** The old generation's starting size, MiB. */
export const INITIAL_OLD_SPACE_MB = 128;

/** V8 background threads per node for a machine with `cores` cores. */
export function v8PoolSizeFor(cores: number): number {
  return Math.max(1, Math.min(4, cores - 1));
}

/** The node flags for a node on this machine. */
export function serverNodeFlags(cores = os.availableParallelism()): string[] {
  return [`--initial-old-space-size=${INITIAL_OLD_SPACE_MB}`, `--v8-pool-size=${v8PoolSizeFor(cores)}`];
}

/** The recommended flags this process was started without (compared by name; values are the operator's). */
export function missingNodeFlags(execArgv: readonly string[], recommended = serverNodeFlags()): string[] {
  const given = new Set(execArgv.map((a) => a.split('=')[0]));
  return recommended.filter((f) => !given.has(f.split('=')[0]));
}
