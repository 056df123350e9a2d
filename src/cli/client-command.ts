// What every client command of `sluice` shares (topics, produce, consume,
// groups, cluster, configs, reassign): the --bootstrap and --json flags, a
// Client built from them, and one way to end — exit 0 on success; on failure
// one line on stderr naming the error (its code name and message, never a
// stack trace) and exit 1. Usage errors (exit 2) are yargs' business (cli.ts).
//
// --bootstrap defaults to $SLUICE_BOOTSTRAP, then ws://127.0.0.1:9092.
// An unreachable bootstrap fails within --request-timeout-ms with a line that
// names the address.

import type { Argv } from 'yargs';
import { Client } from '../index.js';
import { isSluiceError } from '../util/errors.js';
import { saslOptionsFrom, type AuthFlags } from './client-auth.js';

export const BOOTSTRAP_DEFAULT = 'ws://127.0.0.1:9092';

export interface ClientFlags extends AuthFlags {
  readonly bootstrap: string;
  readonly json: boolean;
  readonly requestTimeoutMs: number;
}

/** Adds the shared client flags to a command's builder. */
export function withClientFlags<T>(y: Argv<T>): Argv<T & ClientFlags> {
  return y
    .option('bootstrap', {
      type: 'string',
      default: process.env.SLUICE_BOOTSTRAP ?? BOOTSTRAP_DEFAULT,
      describe: 'broker listeners, ws://host:port[,...] (env SLUICE_BOOTSTRAP)',
    })
    .option('json', { type: 'boolean', default: false, describe: 'machine-readable output' })
    .option('request-timeout-ms', { type: 'number', default: 10_000, describe: 'how long a broker may take to answer' })
    .option('sasl-mechanism', { type: 'string', describe: 'log in with SCRAM-SHA-256, SCRAM-SHA-512, PLAIN or OAUTHBEARER (env SLUICE_SASL_MECHANISM)' })
    .option('sasl-username', { type: 'string', describe: 'SASL user name (env SLUICE_SASL_USERNAME)' })
    .option('sasl-password', { type: 'string', describe: 'SASL password (env SLUICE_SASL_PASSWORD; a flag shows in ps: prefer the env or --command-config)' })
    .option('sasl-token-file', { type: 'string', describe: 'OAUTHBEARER: file holding the JWT (env SLUICE_SASL_TOKEN: the JWT itself)' })
    .option('command-config', { type: 'string', describe: 'client settings file with Kafka\'s names: security.protocol, sasl.mechanism, sasl.username, sasl.password or sasl.jaas.config' }) as unknown as Argv<T & ClientFlags>;
}

/** A Client for the command: few retries, so a dead bootstrap fails fast with its address. */
export function clientFrom(flags: ClientFlags): Client {
  const sasl = saslOptionsFrom(flags);
  return new Client({
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
