// What every client command of `sluice` shares (topics, produce, consume,
// groups, cluster, configs, reassign): the --bootstrap and --json flags, a
// Client built from them, and one way to end — exit 0 on success; on failure
// one line on stderr naming the error (its code name and message, never a
// stack trace) and exit 1. Usage errors (exit 2) are yargs' business (cli.ts).
//
// --bootstrap defaults to $SLUICE_BOOTSTRAP, then ws://127.0.0.1:9092.
// An unreachable bootstrap fails within --request-timeout-ms with a line that
// names the address.

import fs from 'node:fs';
import type { Argv } from 'yargs';
import { Client, type NodeTlsOptions } from '../index.js';
import { Errors, SluiceError, isSluiceError } from '../util/errors.js';
import { saslOptionsFrom, type AuthFlags } from './client-auth.js';

export const BOOTSTRAP_DEFAULT = 'ws://127.0.0.1:9092';

export interface ClientFlags extends AuthFlags {
  readonly bootstrap: string;
  readonly json: boolean;
  readonly requestTimeoutMs: number;
  /** PEM files for wss:// clusters (env SLUICE_TLS_CA, SLUICE_TLS_CERT, SLUICE_TLS_KEY). */
  readonly tlsCa?: string;
  readonly tlsCert?: string;
  readonly tlsKey?: string;
}

/** Adds the shared client flags to a command's builder. */
export function withClientFlags<T>(y: Argv<T>): Argv<T & ClientFlags> {
  return y
    .option('bootstrap', {
      type: 'string',
      default: process.env.SLUICE_BOOTSTRAP ?? BOOTSTRAP_DEFAULT,
      describe: 'broker listeners, ws://host:port or wss://host:port (TLS) [,...] (env SLUICE_BOOTSTRAP)',
    })
    .option('json', { type: 'boolean', default: false, describe: 'machine-readable output' })
    .option('request-timeout-ms', { type: 'number', default: 10_000, describe: 'how long a broker may take to answer' })
    .option('tls-ca', { type: 'string', default: process.env.SLUICE_TLS_CA, describe: 'wss:// clusters: PEM file of the CA to trust (env SLUICE_TLS_CA)' })
    .option('tls-cert', { type: 'string', default: process.env.SLUICE_TLS_CERT, describe: 'wss:// clusters asking for client certificates: PEM certificate (env SLUICE_TLS_CERT)' })
    .option('tls-key', { type: 'string', default: process.env.SLUICE_TLS_KEY, describe: 'the private key of --tls-cert, PEM (env SLUICE_TLS_KEY)' })
    .option('sasl-mechanism', { type: 'string', describe: 'log in with SCRAM-SHA-256, SCRAM-SHA-512, PLAIN or OAUTHBEARER (env SLUICE_SASL_MECHANISM)' })
    .option('sasl-username', { type: 'string', describe: 'SASL user name (env SLUICE_SASL_USERNAME)' })
    .option('sasl-password', { type: 'string', describe: 'SASL password (env SLUICE_SASL_PASSWORD; a flag shows in ps: prefer the env or --command-config)' })
    .option('sasl-token-file', { type: 'string', describe: 'OAUTHBEARER: file holding the JWT (env SLUICE_SASL_TOKEN: the JWT itself)' })
    .option('command-config', { type: 'string', describe: 'client settings file with Kafka\'s names: security.protocol, sasl.mechanism, sasl.username, sasl.password or sasl.jaas.config' }) as unknown as Argv<T & ClientFlags>;
}

function readPemFlag(file: string, flag: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new SluiceError(Errors.INVALID_CONFIG, `${flag} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** The TLS options the --tls-* flags name, or undefined when none is given. */
export function tlsOptionsFrom(flags: ClientFlags): NodeTlsOptions | undefined {
  if (flags.tlsCa === undefined && flags.tlsCert === undefined && flags.tlsKey === undefined) return undefined;
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined)) throw new SluiceError(Errors.INVALID_CONFIG, '--tls-cert and --tls-key go together');
  return {
    ...(flags.tlsCa !== undefined ? { ca: readPemFlag(flags.tlsCa, '--tls-ca') } : {}),
    ...(flags.tlsCert !== undefined ? { cert: readPemFlag(flags.tlsCert, '--tls-cert') } : {}),
    ...(flags.tlsKey !== undefined ? { key: readPemFlag(flags.tlsKey, '--tls-key') } : {}),
  };
}

/** A Client for the command: few retries, so a dead bootstrap fails fast with its address. */
export function clientFrom(flags: ClientFlags): Client {
  const tls = tlsOptionsFrom(flags);
  const sasl = saslOptionsFrom(flags);
  return new Client({
    ...(tls ? { tls } : {}),
    ...(sasl ? { sasl } : {}),
    bootstrap: flags.bootstrap,
    clientId: 'sluice-cli',
    requestTimeoutMs: flags.requestTimeoutMs,
    connectTimeoutMs: Math.min(flags.requestTimeoutMs, 5_000),
    retry: { retries: 5, initialRetryTimeMs: 100, maxRetryTimeMs: 1_000 },
  });
}

/** One line for an error: the code name and message for SluiceErrors, the message otherwise. */
export function errorLine(err: unknown): string {
  if (isSluiceError(err)) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

/**
 * Runs a client command: builds the client, runs `body`, closes the client,
 * and exits 0 — or prints one line and exits 1.
 */
export async function runClientCommand(flags: ClientFlags, body: (client: Client) => Promise<void>): Promise<never> {
  let client: Client | undefined;
  try {
    client = clientFrom(flags);
    await body(client);
    client.close();
    process.exit(0);
  } catch (err) {
    client?.close();
    process.stderr.write(`sluice: ${errorLine(err)} (bootstrap ${flags.bootstrap})\n`);
    process.exit(1);
  }
}

/** Prints `value` as JSON (--json) or as the text `render` makes. */
export function print(flags: ClientFlags, value: unknown, render: () => string): void {
  process.stdout.write(flags.json ? `${JSON.stringify(value, null, 2)}\n` : `${render()}\n`);
}
