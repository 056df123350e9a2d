// `make bench [BENCH="storage raft"]`: runs the named benchmark scenarios (all
// by default) one after another, each in its own process so one cannot warm
// or pollute another's heap. Each scenario prints its own report; extra
// arguments after the names are passed through (e.g. --json).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

const SCENARIOS: Record<string, { file: string; what: string; args?: string[] }> = {
  loopback: { file: 'loopback.bench.js', what: 'the floor: one message on loopback TCP between two Node.js processes, no Sluice' },
  storage: { file: 'storage.bench.js', what: 'partition log append/read vs raw fs.writeSync' },
  'raft-disk': { file: 'raft-disk.bench.js', what: 'Raft log appends with one fsync per batch' },
  raft: { file: 'raft.bench.js', what: '3 voter processes: commit rate, latency, re-election after SIGKILL' },
  controller: { file: 'controller.bench.js', what: '3 controller processes: failover to CreateTopics, 10,000 partitions, fencing' },
  scale: { file: 'scale.bench.js', what: '10,000 partitions (RF 3) on 3 combined nodes: created, memory per partition, restart (loaded), broker SIGKILL' },
  failover: { file: 'failover.bench.js', what: 'controller SIGKILL, partition-leader SIGKILL and SIGTERM under an acks=all producer' },
  compare: { file: 'suite/compare.js', what: 'Sluice vs Apache Kafka, NATS JetStream and Redis Streams, same workloads, same run (make bench-peers installs the peers)', args: ['--profile', 'full'] },
  'kafka-path': { file: 'kafka-path.bench.js', what: 'the Kafka listener against the WebSocket path: kafka-producer/consumer-perf-test vs Sluice\'s Producer/Consumer, same records, acks=all, RF=3' },
  tls: { file: 'tls.bench.js', what: 'plain vs TLS (wss://, node mTLS, client certificate) vs TLS + SCRAM-SHA-512 login: produce and consume throughput and broker CPU, acks=all, RF=3, as ratios' },
  txn: { file: 'txn.bench.js', what: 'transactions through the client: idempotent baseline vs transaction per K records (1/3 partitions), commit latency, exactly-once copy, read_committed vs read_uncommitted; RF=3 acks=all' },
  'send-loop': { file: 'send-loop.bench.js', what: 'the Producer: a loop of single-record send() calls (RF=3 acks=all, 100 B) against the raw pipelined figure on the same cluster' },
  'broker-cpu': { file: 'broker-cpu.bench.js', what: 'the brokers\' CPU per record by role (leader, followers): raw 500-record batches vs the Producer\'s defaults, RF=3 acks=all, 100 B (--brokers DIR: another build\'s servers)' },
  produce: { file: 'produce.bench.js', what: '1 producer, 100-byte records, 3 combined nodes: RF=3 acks=all (with and without fsync), RF=1 acks=1' },
};

const args = process.argv.slice(2);
const names = args.filter((a) => !a.startsWith('-') && Object.hasOwn(SCENARIOS, a));
const unknown = args.filter((a) => !a.startsWith('-') && !Object.hasOwn(SCENARIOS, a) && !/^\d+$/.test(a));
if (unknown.length > 0) {
  process.stderr.write(`bench: unknown scenario ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}\n`);
  process.exit(2);
}
const passThrough = args.filter((a) => !names.includes(a));
let failed = 0;
for (const name of names.length > 0 ? names : Object.keys(SCENARIOS)) {
  const s = SCENARIOS[name]!;
  process.stdout.write(`\n=== bench ${name}: ${s.what} ===\n`);
  const r = spawnSync(process.execPath, [path.join(here, s.file), ...(s.args ?? []), ...passThrough], { stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    process.stderr.write(`bench ${name} failed (exit ${r.status ?? r.signal})\n`);
  }
}
process.exit(failed > 0 ? 1 : 0);
