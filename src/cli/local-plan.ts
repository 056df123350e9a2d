// The plan of a `sluice local` cluster and the text it prints, kept apart
// from the process management (local-cluster.ts) so both are easy to read
// and to change: which ports, data dirs and `sluice server` flags node i
// gets, the flag limits, the table printed once the cluster is ready, and
// the "what next" hints (one place, extended as commands arrive).
//
// Invariants of a plan: node ids are 1..N; node i (1-based) listens on
// basePort + 2(i-1) (broker) and basePort + 2(i-1) + 1 (controller), all on
// 127.0.0.1, so the ports of a plan are distinct and consecutive (plus its
// Kafka listener 100 and its HTTP listener 200 above the broker's); every node
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
/** Node i's HTTP listener (metrics, health, the web console) is its broker port + this (9092 → 9292, ...). */
export const HTTP_PORT_OFFSET = 200;
export const NODE_DIR_PREFIX = 'node-';
export const SERVER_LOG = 'server.log';
export const LOCAL_ROLES = 'broker,controller';

export interface LocalOptions {
  readonly nodes: number;
  /** --tls: every listener on TLS with a throw-away CA under <data-dir>/tls (node-to-node mTLS required). */
  readonly tls?: boolean;
  /** --auth (with --tls): ACLs, super users, SASL logins required on both client listeners, an admin SCRAM user. */
  readonly auth?: boolean;
  /** As the user gave it (shown in the table); children get the absolute path. */
  readonly dataDir: string;
  readonly basePort: number;
  /** --console-admin: the web consoles offer the produce form and admin actions. */
  readonly consoleAdmin?: boolean;
}

export interface LocalNodePlan {
  readonly id: number;
  readonly brokerPort: number;
  readonly controllerPort: number;
  readonly kafkaPort: number;
  readonly httpPort: number;
  readonly brokerUrl: string;
  /** The web console: http://127.0.0.1:httpPort/console/. */
  readonly consoleUrl: string;
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

/** The SCRAM user `sluice local --auth` makes for the operator (a super user). */
export const LOCAL_ADMIN_USER = 'admin';
export const LOCAL_ADMIN_MECHANISM = 'SCRAM-SHA-512';

/** What --auth turns on (present only with --tls). */
export interface LocalAuthPlan {
  readonly adminUser: string;
  readonly mechanism: string;
  /** A properties file (mode 0600) with the admin's password: `--command-config` of the CLI, a Java client's config. */
  readonly adminProperties: string;
  /** super.users: every node's certificate subject, the CLI certificate's and User:admin (';'-separated, as Kafka's). */
  readonly superUsers: string;
  /** The principal of the CLI's client certificate. */
  readonly cliPrincipal: string;
}

/** The principal a `sluice local --tls` certificate gets under the DEFAULT mapping rule (tls-certs.ts writes O=sluice local, CN=<cn>). */
export function localCertPrincipal(cn: string): string {
  return `User:CN=${cn},O=sluice local`;
}
export interface LocalPlan {
  /** --data-dir as the user gave it. */
  readonly dataDir: string;
  /** Present with --tls. */
  readonly tls: LocalTlsPlan | undefined;
  /** Present with --auth. */
  readonly auth: LocalAuthPlan | undefined;
  readonly nodes: readonly LocalNodePlan[];
  /** controller.quorum.voters: every node, id@127.0.0.1:controllerPort. */
  readonly quorum: string;
  readonly ports: readonly number[];
  readonly bootstrap: string;
  /** The Kafka clients' bootstrap.servers: every node's Kafka listener. */
  readonly kafkaBootstrap: string;
  readonly consoleAdmin: boolean;
}

/** The highest --base-port that still leaves room for `nodes` nodes' ports. */
export function basePortMax(nodes: number): number {
  return PORT_MAX - 2 * nodes + 1 - HTTP_PORT_OFFSET;
}

/** A one-line reason when the flags are out of range, else undefined (yargs .check turns it into usage + exit 2). */
export function validateLocalFlags(opts: { nodes: unknown; basePort: unknown; dataDir: unknown; tls?: unknown; auth?: unknown }): string | undefined {
  const { nodes, basePort, dataDir } = opts;
  if (opts.auth === true && opts.tls !== true) {
    return '--auth needs --tls: the nodes authenticate each other by certificate and logins must not cross the network in the clear (run sluice local --tls --auth)';
  }
  if (typeof nodes !== 'number' || !Number.isInteger(nodes) || nodes < 1 || nodes > LOCAL_NODES_MAX) {
    return `--nodes must be an integer from 1 to ${LOCAL_NODES_MAX}, got ${String(nodes)}`;
  }
  const max = basePortMax(nodes);
  if (typeof basePort !== 'number' || !Number.isInteger(basePort) || basePort < LOCAL_BASE_PORT_MIN || basePort > max) {
    return `--base-port must be an integer from ${LOCAL_BASE_PORT_MIN} to ${max} (${nodes} nodes use ${2 * nodes} ports from it, ${nodes} more ${KAFKA_PORT_OFFSET} above and ${nodes} more ${HTTP_PORT_OFFSET} above), got ${String(basePort)}`;
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
  const cliPrincipal = localCertPrincipal('sluice-cli');
  const auth: LocalAuthPlan | undefined = opts.auth && tls
    ? {
      adminUser: LOCAL_ADMIN_USER, mechanism: LOCAL_ADMIN_MECHANISM, adminProperties: path.join(tlsDir, 'admin.properties'), cliPrincipal,
      superUsers: [...Array.from({ length: opts.nodes }, (_, i) => localCertPrincipal(`node-${i + 1}`)), cliPrincipal, `User:${LOCAL_ADMIN_USER}`].join(';'),
    }
    : undefined;
  for (let id = 1; id <= opts.nodes; id++) {
    const brokerPort = opts.basePort + 2 * (id - 1);
    const controllerPort = brokerPort + 1;
    const kafkaPort = brokerPort + KAFKA_PORT_OFFSET;
    const httpPort = brokerPort + HTTP_PORT_OFFSET;
    const dataDir = path.join(opts.dataDir, `${NODE_DIR_PREFIX}${id}`);
    const dataDirAbs = path.resolve(dataDir);
    nodes.push({
      id, brokerPort, controllerPort, kafkaPort, httpPort,
      brokerUrl: `${ws}://${LOCAL_HOST}:${brokerPort}`,
      consoleUrl: `http://${LOCAL_HOST}:${httpPort}/console/`,
      kafkaAddress: `${LOCAL_HOST}:${kafkaPort}`,
      controllerUrl: `${ws}://${LOCAL_HOST}:${controllerPort}`,
      dataDir, dataDirAbs, logFile: path.join(dataDirAbs, SERVER_LOG),
    });
  }
  return {
    dataDir: opts.dataDir,
    tls,
    auth,
    nodes,
    quorum: nodes.map((n) => `${n.id}@${LOCAL_HOST}:${n.controllerPort}`).join(','),
    ports: nodes.flatMap((n) => [n.brokerPort, n.controllerPort, n.kafkaPort, n.httpPort]),
    bootstrap: nodes[0]?.brokerUrl ?? '',
    kafkaBootstrap: nodes.map((n) => n.kafkaAddress).join(','),
    consoleAdmin: opts.consoleAdmin === true,
  };
}

/** The `sluice server` arguments of one node of the plan (after `server`). */
export function serverArgs(plan: LocalPlan, node: LocalNodePlan): string[] {
  const tls = plan.tls
    ? ['--ssl-keystore-location', plan.tls.nodeKeystore(node.id), '--ssl-truststore-location', plan.tls.caFile, '--ssl-client-auth', 'required']
    : [];
  // --auth: the controller listener keeps requiring node certificates; the client listeners ask for one (the nodes'
  // fetchers and the CLI present theirs) and otherwise want a SASL login; the authorizer lets the nodes and the admins do anything.
  const auth = plan.auth
    ? [
      '--broker-ssl-client-auth', 'requested', '--kafka-ssl-client-auth', 'requested', '--ws-sasl-required',
      '--sasl-enabled-mechanisms', 'SCRAM-SHA-256,SCRAM-SHA-512', '--authorizer', 'acl', '--super-users', plan.auth.superUsers,
    ]
    : [];
  const kafkaListen = plan.auth ? `SASL_SSL://${node.kafkaAddress}` : plan.tls ? `SSL://${node.kafkaAddress}` : node.kafkaAddress;
  return [
    '--node-id', String(node.id), '--roles', LOCAL_ROLES,
    '--listen', node.brokerUrl, '--controller-listen', node.controllerUrl, '--kafka-listen', kafkaListen,
    '--controller-quorum', plan.quorum, '--data-dir', node.dataDirAbs, ...tls, ...auth,
    '--http-listen', `http://${LOCAL_HOST}:${node.httpPort}`, ...(plan.consoleAdmin ? ['--console-admin'] : []),
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
export function readyReport(plan: LocalPlan, running: readonly RunningNode[], clusterId: string, sluice = 'sluice', adminPassword?: string): string {
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
    `  Kafka      bootstrap.servers=${plan.kafkaBootstrap}${plan.auth ? ` (security.protocol=SASL_SSL, sasl.mechanism=${plan.auth.mechanism})` : plan.tls ? ' (security.protocol=SSL)' : ''}`,
    ...(plan.tls && !plan.auth ? [
      `  TLS        CA ${plan.tls.caFile}`,
      `             client certificate ${plan.tls.clientCert}, key ${plan.tls.clientKey} (ssl.client.auth=required)`,
    ] : []),
    ...(plan.tls && plan.auth ? [
      `  TLS        CA ${plan.tls.caFile} (nodes authenticate each other by certificate)`,
      `  auth       ACLs on; every client logs in: SASL (SCRAM-SHA-256/512) or the CLI certificate`,
      `  admin      user ${plan.auth.adminUser}, password ${adminPassword ?? '(see the file)'} (${plan.auth.mechanism}; in ${plan.auth.adminProperties})`,
      `             or the client certificate ${plan.tls.clientCert}, key ${plan.tls.clientKey} (${plan.auth.cliPrincipal})`,
      `  super.users ${plan.auth.superUsers}`,
    ] : []),
    `  console    ${plan.nodes[0]?.consoleUrl ?? ''} (every node serves one; /metrics beside it)${plan.consoleAdmin ? ', admin actions on' : ''}`,
    `  quorum     ${plan.quorum}`,
    `  logs       ${path.join(plan.dataDir, `${NODE_DIR_PREFIX}<id>`, SERVER_LOG)}`,
    '',
    ...nextSteps(plan, sluice, adminPassword),
    '',
  ].join('\n');
}

/**
 * What to try next. Only what works today: extend this list (and nothing
 * else) as the client commands arrive.
 */
export function nextSteps(plan: LocalPlan, sluice = 'sluice', adminPassword = '<admin password>'): string[] {
  const last = plan.nodes.at(-1);
  const extraId = plan.nodes.length + 1;
  const extraBrokerPort = (last?.controllerPort ?? 0) + 1;
  const t = plan.tls;
  const a = plan.auth;
  const scheme = t ? 'wss' : 'ws';
  const tlsNode = t ? ` --ssl-keystore-location <its cert+key PEM> --ssl-truststore-location ${t.caFile} --ssl-client-auth required` : '';
  return [
    'Next:',
    ...(t && !a ? [
      '  every command below needs the CA and the client certificate; set them once:',
      `    export SLUICE_BOOTSTRAP=${plan.bootstrap} SLUICE_TLS_CA=${t.caFile} SLUICE_TLS_CERT=${t.clientCert} SLUICE_TLS_KEY=${t.clientKey}`,
    ] : []),
    ...(t && a ? [
      '  every command below needs the CA and a login; as the admin user:',
      `    export SLUICE_BOOTSTRAP=${plan.bootstrap} SLUICE_TLS_CA=${t.caFile} SLUICE_SASL_MECHANISM=${a.mechanism} SLUICE_SASL_USERNAME=${a.adminUser} SLUICE_SASL_PASSWORD=${adminPassword}`,
      `  (or, instead of the SASL variables, the CLI certificate: SLUICE_TLS_CERT=${t.clientCert} SLUICE_TLS_KEY=${t.clientKey})`,
    ] : []),
    `  clients connect with --bootstrap ${plan.bootstrap} (or SLUICE_BOOTSTRAP)`,
    `  create a topic:        ${sluice} topics create --topic demo --partitions 3 --replication-factor 3`,
    `  produce lines:         echo hello | ${sluice} produce --topic demo`,
    `  read them back:        ${sluice} consume --topic demo --from-beginning --max-messages 1`,
    `  the cluster:           ${sluice} cluster status`,
    ...(a ? [
      `  a user of your own:    SLUICE_USER_PASSWORD=alice-secret ${sluice} users create alice`,
      `  let it produce:        ${sluice} acls add --allow-principal User:alice --operation Write --operation Create --topic alice- --resource-pattern-type prefixed`,
    ] : []),
    t && a
      ? `  with Kafka's tools:    kcat -b ${plan.kafkaBootstrap} -X security.protocol=SASL_SSL -X sasl.mechanisms=${a.mechanism} -X sasl.username=${a.adminUser} -X sasl.password=${adminPassword} -X ssl.ca.location=${t.caFile} -L`
      : t
      ? `  with Kafka's tools:    kcat -b ${plan.kafkaBootstrap} -X security.protocol=SSL -X ssl.ca.location=${t.caFile} -X ssl.certificate.location=${t.clientCert} -X ssl.key.location=${t.clientKey} -L`
      : `  with Kafka's tools:    kcat -b ${plan.kafkaBootstrap} -L`,
    `  options of one node:   ${sluice} server --help`,
    `  follow a node's log:   tail -f ${last?.logFile ?? SERVER_LOG}`,
    `  add a broker-only node (a metadata observer):`,
    `    ${sluice} server --node-id ${extraId} --roles broker --listen ${scheme}://${LOCAL_HOST}:${extraBrokerPort} `
      + `--controller-listen ${scheme}://${LOCAL_HOST}:${extraBrokerPort + 1} --controller-quorum ${plan.quorum} --data-dir ./broker-${extraId}${tlsNode}`,
    ...(a ? ['    (with --auth also the others\' --authorizer, --super-users and SASL flags, and its certificate\'s subject in every node\'s --super-users: see docs/security.md)'] : []),
    '  stop: Ctrl-C (a second Ctrl-C kills the nodes at once); run the same command again to resume',
  ];
}
