// How a `sluice` client command logs in (docs/security.md, "CLI"): flags,
// environment variables, or a client config file in the spirit of Kafka's
// --command-config, in that order of precedence.
//
//   --sasl-mechanism M       SCRAM-SHA-256 | SCRAM-SHA-512 | PLAIN | OAUTHBEARER   (env SLUICE_SASL_MECHANISM)
//   --sasl-username U        (env SLUICE_SASL_USERNAME)
//   --sasl-password P        (env SLUICE_SASL_PASSWORD; visible in `ps`: prefer the env or the file)
//   --sasl-token-file F      OAUTHBEARER: a file holding the JWT (env SLUICE_SASL_TOKEN holds the JWT itself)
//   --command-config F       key=value lines with Kafka's client names:
//                              security.protocol=SASL_PLAINTEXT (PLAINTEXT: no login)
//                              sasl.mechanism=SCRAM-SHA-512
//                              sasl.username=alice / sasl.password=...   (Sluice's own short keys), or Kafka's
//                              sasl.jaas.config=... username="alice" password="...";
//                              sasl.oauthbearer.token=<JWT> or sasl.oauthbearer.token.file=<path>
// A mechanism without what it needs is a usage error naming the missing piece.

import fs from 'node:fs';
import type { SaslOptions } from '../client/sasl.js';
import { parseProperties } from '../server/config-file.js';

export interface AuthFlags {
  readonly saslMechanism?: string;
  readonly saslUsername?: string;
  readonly saslPassword?: string;
  readonly saslTokenFile?: string;
  readonly commandConfig?: string;
}

const MECHANISMS = ['SCRAM-SHA-256', 'SCRAM-SHA-512', 'PLAIN', 'OAUTHBEARER'];

function fileSettings(file: string | undefined): Map<string, string> {
  if (file === undefined) return new Map();
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`--command-config ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const props = parseProperties(text, file);
  const jaas = props.get('sasl.jaas.config');
  if (jaas !== undefined) {
    const user = /username="([^"]*)"/.exec(jaas)?.[1];
    const pass = /password="([^"]*)"/.exec(jaas)?.[1];
    if (user !== undefined && !props.has('sasl.username')) props.set('sasl.username', user);
    if (pass !== undefined && !props.has('sasl.password')) props.set('sasl.password', pass);
  }
  return props;
}

function readToken(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new Error(`token file ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

/** The client's SASL options, or undefined for no login. Throws a usage message. */
export function saslOptionsFrom(flags: AuthFlags, env: NodeJS.ProcessEnv = process.env): SaslOptions | undefined {
  const file = fileSettings(flags.commandConfig);
  const protocol = file.get('security.protocol');
  const mechanism = (flags.saslMechanism ?? env.SLUICE_SASL_MECHANISM ?? file.get('sasl.mechanism'))?.toUpperCase();
  if (mechanism === undefined) {
    if (protocol !== undefined && protocol.toUpperCase().startsWith('SASL_')) throw new Error(`--command-config: security.protocol=${protocol} needs sasl.mechanism`);
    return undefined;
  }
  if (protocol !== undefined && !protocol.toUpperCase().startsWith('SASL_')) return undefined;
  if (!MECHANISMS.includes(mechanism)) throw new Error(`unknown SASL mechanism ${mechanism} (${MECHANISMS.join(', ')})`);
  if (mechanism === 'OAUTHBEARER') {
    const tokenFile = flags.saslTokenFile ?? file.get('sasl.oauthbearer.token.file');
    const token = tokenFile !== undefined ? readToken(tokenFile) : env.SLUICE_SASL_TOKEN ?? file.get('sasl.oauthbearer.token');
    if (!token) throw new Error('OAUTHBEARER needs a token: --sasl-token-file, $SLUICE_SASL_TOKEN or sasl.oauthbearer.token');
    return { mechanism: 'OAUTHBEARER', token };
  }
  const username = flags.saslUsername ?? env.SLUICE_SASL_USERNAME ?? file.get('sasl.username');
  const password = flags.saslPassword ?? env.SLUICE_SASL_PASSWORD ?? file.get('sasl.password');
  if (!username || password === undefined) throw new Error(`${mechanism} needs a user name and a password: --sasl-username/--sasl-password, $SLUICE_SASL_USERNAME/$SLUICE_SASL_PASSWORD or --command-config`);
  return { mechanism: mechanism as 'SCRAM-SHA-256' | 'SCRAM-SHA-512' | 'PLAIN', username, password };
}
