// `sluice server`: runs one node in the foreground until SIGTERM/SIGINT.
//
// Exit codes (the contract in DESIGN.md): 2 for usage problems (bad or
// missing flags, a role that is not available yet), 1 for operating failures
// (port in use, unusable data dir, data dir of another node, a disk error
// while running), 0 after a controlled stop on SIGTERM/SIGINT. Failures print
// one line on stderr; logs go to stdout as pino JSON.

import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';
import { createLogger, type Logger } from '../../util/logger.js';
import { isSluiceError } from '../../util/errors.js';
import { LOG_LEVELS, serverConfigFromFlags, type ServerConfig, type ServerFlags } from '../../server/config.js';
import { startServer, type Server } from '../../server/server.js';
import { readServerConfigFile } from '../../server/config-file.js';
import { missingNodeFlags } from '../../server/runtime-flags.js';

type Args = ArgumentsCamelCase<ServerFlags & { logFormat?: string }>;

function builder(y: Argv): Argv<ServerFlags> {
  return y
    .usage('$0 server --node-id N --roles broker,controller --listen ws://HOST:PORT --controller-listen ws://HOST:PORT --controller-quorum ID@HOST:PORT,... --data-dir DIR')
    .config('config', 'settings from a .properties or .json file with Kafka\'s names (node.id, process.roles, listeners, controller.quorum.voters, log.dirs, log.* ...); flags win over it', (file: string) => readServerConfigFile(file))
    // The log.* keys of a config file arrive here as one object (not a command-line flag).
    .option('log-config', { type: 'string', hidden: true })
    .option('cluster-defaults', { type: 'string', hidden: true })
    .option('node-id', { type: 'number', demandOption: true, describe: 'this node\'s id (node.id)' })
    .option('roles', { type: 'string', demandOption: true, describe: 'process.roles: broker, controller or broker,controller' })
    .option('controller-listen', { type: 'string', demandOption: true, describe: 'controller listener, ws://host:port or wss://host:port (TLS) (on a broker-only node: where it follows the metadata log)' })
    .option('controller-quorum', { type: 'string', demandOption: true, describe: 'controller.quorum.voters: id@host:port,...' })
    .option('data-dir', { type: 'string', demandOption: true, describe: 'data directory (log.dirs)' })
    .option('listen', { type: 'string', describe: 'broker listener for clients and follower fetches, ws://host:port or wss://host:port (TLS) (broker role)' })
    .option('advertised-listen', { type: 'string', describe: 'the broker URL given to clients and followers when it differs from --listen (a proxy, NAT): ws://host:port' })
    .option('advertised-controller-listen', { type: 'string', describe: 'on a broker-only node: the CONTROLLER URL voters dial when it differs from --controller-listen' })
    .option('outbound-address', { type: 'string', describe: 'local IP address this node\'s connections to other nodes are dialed from (default: chosen by the OS)' })
    .option('durability', { type: 'string', choices: ['replication', 'fsync'], describe: 'replication (default): a batch counts toward the high watermark once appended; fsync: once fsynced on the leader and each ISR member' })
    .option('replica-lag-time-max-ms', { type: 'number', describe: 'replica.lag.time.max.ms: a follower not caught up for this long leaves the ISR (default 30000)' })
    .option('kafka-listen', { type: 'string', describe: 'listener of Kafka\'s binary protocol for Kafka clients and tools: HOST:PORT or PROTOCOL://HOST:PORT with PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (broker role; kafka.listeners)' })
    .option('kafka-advertised-listen', { type: 'string', describe: 'the HOST:PORT Kafka clients are given when it differs from --kafka-listen (a proxy, NAT)' })
    .option('authorizer', { type: 'string', describe: 'authorizer.class.name: "acl" (or Kafka\'s org.apache.kafka.metadata.authorizer.StandardAuthorizer) enforces ACLs on every listener (docs/security.md)' })
    .option('super-users', { type: 'string', describe: 'super.users: principals allowed everything, e.g. "User:admin;User:broker"' })
    .option('allow-everyone-if-no-acl-found', { type: 'boolean', describe: 'allow.everyone.if.no.acl.found: a resource no ACL names is open to all (default false)' })
    .option('auto-create-topics-enable', { type: 'boolean', describe: 'auto.create.topics.enable: Kafka clients\' Metadata requests create missing topics (default true)' })
    .option('ssl-keystore-location', { type: 'string', describe: 'ssl.keystore.location: PEM file with this node\'s certificate chain and private key (TLS listeners, links to TLS peers)' })
    .option('ssl-key-password', { type: 'string', describe: 'ssl.key.password: passphrase of an encrypted private key' })
    .option('ssl-truststore-location', { type: 'string', describe: 'ssl.truststore.location: PEM file of the CA certificates peers and clients are checked against' })
    .option('ssl-client-auth', { type: 'string', choices: ['none', 'requested', 'required'], describe: 'ssl.client.auth: ask TLS clients and peers for a certificate (default none)' })
    .option('broker-ssl-client-auth', { type: 'string', choices: ['none', 'requested', 'required'], describe: 'listener.name.broker.ssl.client.auth: ssl.client.auth for the broker (WebSocket) listener only (default: ssl.client.auth)' })
    .option('kafka-ssl-client-auth', { type: 'string', choices: ['none', 'requested', 'required'], describe: 'listener.name.kafka.ssl.client.auth: ssl.client.auth for the Kafka listener only (default: ssl.client.auth)' })
    .option('ssl-principal-mapping-rules', { type: 'string', describe: 'ssl.principal.mapping.rules: DEFAULT, RULE:pattern/replacement/[LU],... (principal from the certificate subject)' })
    .option('ssl-endpoint-identification-algorithm', { type: 'string', describe: 'ssl.endpoint.identification.algorithm: https (default; check the peer\'s host name) or \'\' (do not)' })
    .option('ssl-reload-interval-ms', { type: 'number', describe: 'how often the TLS files are checked for changes and reloaded (default 30000; 0: never)' })
    .option('sasl-enabled-mechanisms', { type: 'string', describe: 'sasl.enabled.mechanisms: SCRAM-SHA-256, SCRAM-SHA-512, PLAIN, OAUTHBEARER, comma-separated (default SCRAM-SHA-256,SCRAM-SHA-512); docs/security.md' })
    .option('sasl-plain-allow-plaintext', { type: 'boolean', describe: 'sasl.plain.allow.plaintext: offer PLAIN on connections without TLS (it sends the password; default false)' })
    .option('connections-max-reauth-ms', { type: 'number', describe: 'connections.max.reauth.ms: a SASL session lasts at most this long without re-authentication (KIP-368; default 0: no limit beyond a token\'s expiry)' })
    .option('sasl-authentication-timeout-ms', { type: 'number', describe: 'sasl.authentication.timeout.ms: close a connection that has not authenticated by then, where authentication is required (default 10000)' })
    .option('ws-sasl-required', { type: 'boolean', describe: 'ws.sasl.required: the WebSocket listener serves nothing before a SASL login or bearer token (default false)' })
    .option('sasl-oauthbearer-jwks-file', { type: 'string', describe: 'sasl.oauthbearer.jwks.file: JWKS (JSON) with the token issuer\'s public keys (RS256/ES256...); needed for OAUTHBEARER' })
    .option('sasl-oauthbearer-expected-audience', { type: 'string', describe: 'sasl.oauthbearer.expected.audience: comma-separated; a token\'s aud must contain one' })
    .option('sasl-oauthbearer-expected-issuer', { type: 'string', describe: 'sasl.oauthbearer.expected.issuer: a token\'s iss must equal it' })
    .option('sasl-oauthbearer-clock-skew-seconds', { type: 'number', describe: 'sasl.oauthbearer.clock.skew.seconds: leeway for exp and nbf (default 30)' })
    .option('sasl-oauthbearer-sub-claim-name', { type: 'string', describe: 'sasl.oauthbearer.sub.claim.name: the claim naming the principal (default sub)' })
    .option('quota-window-num', { type: 'number', describe: 'quota.window.num: samples client quota rates are measured over (default 11)' })
    .option('quota-window-size-seconds', { type: 'number', describe: 'quota.window.size.seconds: length of one quota sample (default 1)' })
    .option('http-listen', { type: 'string', describe: 'serve Prometheus /metrics, /healthz, /readyz and the web console (/console/) over HTTP at http://host:port, or HTTPS at https://host:port with the node\'s ssl.* identity (off by default; http.listen)' })
    .option('metrics-listen', { type: 'string', describe: 'the old name of --http-listen' })
    .option('console-admin', { type: 'boolean', describe: 'let the web console produce records and run admin actions (elect leaders, delete groups); default: read-only (console.admin.enable)' })
    .option('sasl-mechanism-inter-broker-protocol', { type: 'string', describe: 'sasl.mechanism.inter.broker.protocol: SCRAM-SHA-256, SCRAM-SHA-512 or PLAIN for this broker\'s replica fetches from brokers whose listener requires a login' })
    .option('inter-broker-sasl-username', { type: 'string', describe: 'inter.broker.sasl.username: the broker principal (a SCRAM user)' })
    .option('inter-broker-sasl-password', { type: 'string', describe: 'inter.broker.sasl.password (shows in ps; prefer $SLUICE_INTER_BROKER_SASL_PASSWORD)' })
    .option('cluster-id', { type: 'string', describe: 'cluster id; default: derived from the quorum' })
    .option('log-level', { type: 'string', default: 'info', choices: LOG_LEVELS as string[] })
    .option('log-format', { type: 'string', choices: ['json', 'pretty'], describe: 'json lines, or pretty for a person; default: pretty on a terminal, json otherwise' })
    .option('election-timeout-ms', { type: 'number', describe: 'base Raft election timeout (effective: uniform in [t, 2t))' })
    .option('snapshot-interval-entries', { type: 'number', describe: 'snapshot the metadata state every N applied entries' })
    .option('join-quorum', { type: 'boolean', describe: 'a controller not in --controller-quorum: follow the metadata log until `sluice cluster add-controller` promotes it' })
    .option('raft-only', { type: 'boolean', default: false, describe: 'run only the Raft quorum with a digest state machine that accepts raw proposals (for measuring consensus alone)' }) as unknown as Argv<ServerFlags>;
}

function usageExit(message: string): never {
  process.stderr.write(`sluice: ${message}\n`);
  process.exit(2);
}

function parseConfig(args: Args): ServerConfig {
  try {
    return serverConfigFromFlags(args);
  } catch (err) {
    usageExit(isSluiceError(err) ? err.message.replace(/^INVALID_CONFIG: /, '') : String(err));
  }
}

/** Resolves with the exit code once the server stopped (signal) or failed. */
async function runUntilStopped(server: Server, logger: Logger): Promise<number> {
  return new Promise<number>((resolve) => {
    let signalled = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) {
        logger.warn({ signal }, 'second signal: exiting without a clean stop');
        resolve(1);
        return;
      }
      signalled = true;
      logger.info({ signal }, 'stopping');
      server.stop({ transferLeadership: true }).then(() => resolve(0), (err: Error) => {
        process.stderr.write(`sluice: stop failed: ${err.message}\n`);
        resolve(1);
      });
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    void server.failed.then(async (err) => {
      process.stderr.write(`sluice: node failed: ${err.message}\n`);
      await server.stop({ transferLeadership: false }).catch(() => undefined);
      resolve(1);
    });
  });
}

async function handler(args: Args): Promise<void> {
  const cfg = parseConfig(args);
  const format = args.logFormat === 'json' || args.logFormat === 'pretty' ? args.logFormat : process.stdout.isTTY ? 'pretty' : 'json';
  const logger = createLogger({ level: cfg.logLevel, format });
  const missing = missingNodeFlags(process.execArgv);
  if (missing.length > 0) logger.warn({ missing }, `started without the node flags a Sluice node runs with (node ${missing.join(' ')} …; docs/operations.md, "Node flags")`);
  let server: Server;
  try {
    server = await startServer(cfg, logger);
  } catch (err) {
    const message = isSluiceError(err) ? err.message.replace(/^[A-Z_]+: /, '') : (err as Error).message;
    process.stderr.write(`sluice: ${message}\n`);
    process.exit(1);
  }
  process.exit(await runUntilStopped(server, logger));
}

export const serverCommand: CommandModule<object, ServerFlags> = {
  command: 'server',
  describe: 'Run one Sluice node (broker, controller or both)',
  builder,
  handler,
};
