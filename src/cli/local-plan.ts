// The plan of a `sluice local` cluster and the text it prints, kept apart
// from the process management (local-cluster.ts) so both are easy to read
// and to change: which ports, data dirs and `sluice server` flags node i
// gets, the flag limits, the table printed once the cluster is ready, and
// the "what next" hints (one place, extended as commands arrive).
//
// Invariants of a plan: node ids are 1..N; node i (1-based) listens on
// basePort + 2(i-1) (broker) and basePort + 2(i-1) + 1 (controller), all on
// 127.0.0.1, so the ports of a plan are distinct and consecutive; every node
// is a combined node (broker,controller) and a voter; node i's data lives in
// <data-dir>/node-<i> and its log in <data-dir>/node-<i>/server.log.

import path from 'node:path';

export const LOCAL_NODES_DEFAULT = 3;
export const LOCAL_NODES_MAX = 9;
export const LOCAL_BASE_PORT_DEFAULT = 9092;
export const LOCAL_DATA_DIR_DEFAULT = './data';
/** Below this, binding needs privileges; above 65535 - 2N + 1 the last node's ports do not exist. */
export const LOCAL_BASE_PORT_MIN = 1024;
export const PORT_MAX = 65_535;
export const LOCAL_HOST = '127.0.0.1';
/** Node i's Kafka-protocol listener is its broker port + this (9092 → 9192, 9094 → 9194, ...). */
export const KAFKA_PORT_OFFSET = 100;
export const NODE_DIR_PREFIX = 'node-';
export const SERVER_LOG = 'server.log';
export const LOCAL_ROLES = 'broker,controller';

export interface LocalOptions {
  readonly nodes: number;
  /** --tls: every listener on TLS with a throw-away CA under <data-dir>/tls (node-to-node mTLS required). */
  readonly tls?: boolean;
  /** As the user gave it (shown in the table); children get the absolute path. */
  readonly dataDir: string;
  readonly basePort: number;
}

export interface LocalNodePlan {
  readonly id: number;
  readonly brokerPort: number;
  readonly controllerPort: number;
  readonly kafkaPort: number;
  readonly brokerUrl: string;
  /** HOST:PORT of the Kafka listener. */
  readonly kafkaAddress: string;
  readonly controllerUrl: string;
  /** As shown to the user (relative if --data-dir was). */
  readonly dataDir: string;
  readonly dataDirAbs: string;
  readonly logFile: string;
}

/** Where `sluice local --tls` keeps its CA and certificates (absolute paths). */
export interface LocalTlsPlan {
  readonly dir: string;
  readonly caFile: string;
  readonly clientCert: string;
  readonly clientKey: string;
  nodeKeystore(id: number): string;
}

export const LOCAL_TLS_DIR = 'tls';

export interface LocalPlan {
  /** --data-dir as the user gave it. */
  readonly dataDir: string;
  /** Present with --tls. */
  readonly tls: LocalTlsPlan | undefined;
  readonly nodes: readonly LocalNodePlan[];
  /** controller.quorum.voters: every node, id@127.0.0.1:controllerPort. */
  readonly quorum: string;
  readonly ports: readonly number[];
  readonly bootstrap: string;
  /** The Kafka clients' bootstrap.servers: every node's Kafka listener. */
  readonly kafkaBootstrap: string;
}

/** The highest --base-port that still leaves room for `nodes` nodes' ports. */
export function basePortMax(nodes: number): number {
  return PORT_MAX - 2 * nodes + 1 - KAFKA_PORT_OFFSET;
}

/** A one-line reason when the flags are out of range, else undefined (yargs .check turns it into usage + exit 2). */
export function validateLocalFlags(opts: { nodes: unknown; basePort: unknown; dataDir: unknown }): string | undefined {
  const { nodes, basePort, dataDir } = opts;
  if (typeof nodes !== 'number' || !Number.isInteger(nodes) || nodes < 1 || nodes > LOCAL_NODES_MAX) {
    return `--nodes must be an integer from 1 to ${LOCAL_NODES_MAX}, got ${String(nodes)}`;
  }
  const max = basePortMax(nodes);
  if (typeof basePort !== 'number' || !Number.isInteger(basePort) || basePort < LOCAL_BASE_PORT_MIN || basePort > max) {
    return `--base-port must be an integer from ${LOCAL_BASE_PORT_MIN} to ${max} (${nodes} nodes use ${2 * nodes} ports from it and ${nodes} more ${KAFKA_PORT_OFFSET} above), got ${String(basePort)}`;
  }
  if (typeof dataDir !== 'string' || dataDir.trim() === '') return '--data-dir is empty';
  return undefined;
}

export function planLocalCluster(opts: LocalOptions): LocalPlan {
  const nodes: LocalNodePlan[] = [];
  const ws = opts.tls ? 'wss' : 'ws';
  const tlsDir = path.resolve(opts.dataDir, LOCAL_TLS_DIR);
  const tls: LocalTlsPlan | undefined = opts.tls
    ? {
      dir: tlsDir, caFile: path.join(tlsDir, 'ca.pem'), clientCert: path.join(tlsDir, 'client-cert.pem'), clientKey: path.join(tlsDir, 'client-key.pem'),
      nodeKeystore: (id) => path.join(tlsDir, `node-${id}.pem`),
    }
    : undefined;
  for (let id = 1; id <= opts.nodes; id++) {
    const brokerPort = opts.basePort + 2 * (id - 1);
    const controllerPort = brokerPort + 1;
    const kafkaPort = brokerPort + KAFKA_PORT_OFFSET;
    const dataDir = path.join(opts.dataDir, `${NODE_DIR_PREFIX}${id}`);
    const dataDirAbs = path.resolve(dataDir);
    nodes.push({
      id, brokerPort, controllerPort, kafkaPort,
      brokerUrl: `${ws}://${LOCAL_HOST}:${brokerPort}`,
      kafkaAddress: `${LOCAL_HOST}:${kafkaPort}`,
      controllerUrl: `${ws}://${LOCAL_HOST}:${controllerPort}`,
      dataDir, dataDirAbs, logFile: path.join(dataDirAbs, SERVER_LOG),
    });
  }
  return {
    dataDir: opts.dataDir,
    tls,
    nodes,
    quorum: nodes.map((n) => `${n.id}@${LOCAL_HOST}:${n.controllerPort}`).join(','),
    ports: nodes.flatMap((n) => [n.brokerPort, n.controllerPort, n.kafkaPort]),
    bootstrap: nodes[0]?.brokerUrl ?? '',
    kafkaBootstrap: nodes.map((n) => n.kafkaAddress).join(','),
  };
}

/** The `sluice server` arguments of one node of the plan (after `server`). */
export function serverArgs(plan: LocalPlan, node: LocalNodePlan): string[] {
  const tls = plan.tls
    ? ['--ssl-keystore-location', plan.tls.nodeKeystore(node.id), '--ssl-truststore-location', plan.tls.caFile, '--ssl-client-auth', 'required']
    : [];
  return [
    '--node-id', String(node.id), '--roles', LOCAL_ROLES,
    '--listen', node.brokerUrl, '--controller-listen', node.controllerUrl, '--kafka-listen', plan.tls ? `SSL://${node.kafkaAddress}` : node.kafkaAddress,
    '--controller-quorum', plan.quorum, '--data-dir', node.dataDirAbs, ...tls,
  ];
}

/**
 * Why the data dir cannot host this plan, or undefined. `formatted` are the
 * node ids whose node-<id>/meta.properties exists. A fresh dir (none) or
 * exactly 1..N resume; anything else belongs to a cluster of another size,
 * whose quorum (and cluster id) these flags would not match.
 */
export function dataDirMismatch(opts: LocalOptions, formatted: readonly number[]): string | undefined {
  if (formatted.length === 0) return undefined;
  const ids = [...formatted].sort((a, b) => a - b);
  const exact = ids.length === opts.nodes && ids.every((id, i) => id === i + 1);
  if (exact) return undefined;
  const held = ids.map((id) => `${NODE_DIR_PREFIX}${id}`).join(', ');
  return `data dir ${opts.dataDir} holds ${held} from an earlier cluster, not the ${opts.nodes} node(s) --nodes ${opts.nodes} asks for; `
    + `run with --nodes ${ids.length === ids.at(-1) ? ids.length : '<its size>'} to resume it, or pick another --data-dir`;
}

export interface RunningNode {
  readonly plan: LocalNodePlan;
  readonly pid: number;
}

function pad(rows: readonly string[][]): string[] {
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length))) ?? [];
  return rows.map((r) => `  ${r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c] ?? 0))).join('   ')}`);
}

/**
 * The table printed on stdout once every node is ready. `sluice` is how the
 * user invoked the command (e.g. `node dist/src/cli/main.js` without a
 * linked binary), so the printed commands can be pasted as they are.
 */
export function readyReport(plan: LocalPlan, running: readonly RunningNode[], clusterId: string, sluice = 'sluice'): string {
  const rows = [
    ['node', 'roles', 'broker listener', 'Kafka listener', 'controller listener', 'data dir', 'pid'],
    ...running.map((r) => [String(r.plan.id), LOCAL_ROLES, r.plan.brokerUrl, r.plan.kafkaAddress, r.plan.controllerUrl, r.plan.dataDir, String(r.pid)]),
  ];
  return [
    `Sluice local cluster ready: ${running.length} node(s), cluster id ${clusterId}`,
    '',
    ...pad(rows),
    '',
    `  bootstrap  ${plan.bootstrap}`,
    `  Kafka      bootstrap.servers=${plan.kafkaBootstrap}${plan.tls ? ' (security.protocol=SSL)' : ''}`,
    ...(plan.tls ? [
      `  TLS        CA ${plan.tls.caFile}`,
      `             client certificate ${plan.tls.clientCert}, key ${plan.tls.clientKey} (ssl.client.auth=required)`,
    ] : []),
    `  quorum     ${plan.quorum}`,
    `  logs       ${path.join(plan.dataDir, `${NODE_DIR_PREFIX}<id>`, SERVER_LOG)}`,
    '',
    ...nextSteps(plan, sluice),
    '',
  ].join('\n');
}

/**
 * What to try next. Only what works today: extend this list (and nothing
 * else) as the client commands arrive.
 */
export function nextSteps(plan: LocalPlan, sluice = 'sluice'): string[] {
  const last = plan.nodes.at(-1);
  const extraId = plan.nodes.length + 1;
  const extraBrokerPort = (last?.controllerPort ?? 0) + 1;
  const t = plan.tls;
  const scheme = t ? 'wss' : 'ws';
  const tlsNode = t ? ` --ssl-keystore-location <its cert+key PEM> --ssl-truststore-location ${t.caFile} --ssl-client-auth required` : '';
  return [
    'Next:',
    ...(t ? [
      '  every command below needs the CA and the client certificate; set them once:',
      `    export SLUICE_BOOTSTRAP=${plan.bootstrap} SLUICE_TLS_CA=${t.caFile} SLUICE_TLS_CERT=${t.clientCert} SLUICE_TLS_KEY=${t.clientKey}`,
    ] : []),
    `  clients connect with --bootstrap ${plan.bootstrap} (or SLUICE_BOOTSTRAP)`,
    `  create a topic:        ${sluice} topics create --topic demo --partitions 3 --replication-factor 3`,
    `  produce lines:         echo hello | ${sluice} produce --topic demo`,
    `  read them back:        ${sluice} consume --topic demo --from-beginning --max-messages 1`,
    `  the cluster:           ${sluice} cluster status`,
    t
      ? `  with Kafka's tools:    kcat -b ${plan.kafkaBootstrap} -X security.protocol=SSL -X ssl.ca.location=${t.caFile} -X ssl.certificate.location=${t.clientCert} -X ssl.key.location=${t.clientKey} -L`
      : `  with Kafka's tools:    kcat -b ${plan.kafkaBootstrap} -L`,
    `  options of one node:   ${sluice} server --help`,
    `  follow a node's log:   tail -f ${last?.logFile ?? SERVER_LOG}`,
    `  add a broker-only node (a metadata observer):`,
    `    ${sluice} server --node-id ${extraId} --roles broker --listen ${scheme}://${LOCAL_HOST}:${extraBrokerPort} `
      + `--controller-listen ${scheme}://${LOCAL_HOST}:${extraBrokerPort + 1} --controller-quorum ${plan.quorum} --data-dir ./broker-${extraId}${tlsNode}`,
    '  stop: Ctrl-C (a second Ctrl-C kills the nodes at once); run the same command again to resume',
  ];
}
