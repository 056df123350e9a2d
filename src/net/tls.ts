// A node's TLS identity and trust, shared by every listener it serves
// (broker wss://, controller wss://, Kafka SSL:// and SASL_SSL://) and every
// link it dials (replica fetchers, the quorum client, Raft peer links), with
// Kafka's setting names (docs/security.md, "Encryption (TLS)"):
//   ssl.keystore.location   PEM: the node's certificate chain and private key
//   ssl.key.password        the private key's passphrase, if it is encrypted
//   ssl.truststore.location PEM: the CA certificates peers are checked against
//   ssl.client.auth         none | requested | required (client certificates)
//   listener.name.broker.ssl.client.auth, listener.name.kafka.ssl.client.auth
//                           the same for the two client listeners only (the
//                           controller listener and HTTPS keep ssl.client.auth)
//   ssl.principal.mapping.rules   the principal of a client certificate
//   ssl.endpoint.identification.algorithm   https (check the peer's host
//                           name against its certificate) or '' (do not)
//
// Invariants: `material` is always a consistent, loaded set (the key matches
// the first certificate, the truststore parses); a reload that fails leaves
// it as it was and is logged, so a half-written file never takes a listener
// down. Servers attached here get every new context (setSecureContext); new
// dials read the current one; established connections keep theirs.
//
// File errors are SluiceError INVALID_CONFIG naming the file and the reason.

import crypto from 'node:crypto';
import fs from 'node:fs';
import tls from 'node:tls';
import type { Logger } from '../util/logger.js';
import type { Scheduler } from '../util/clock.js';
import { Errors, SluiceError } from '../util/errors.js';
import { ANONYMOUS, type SecuritySession } from '../security/principal.js';
import { applyMappingRules, parseMappingRules, rfc2253, type MappingRule } from './tls-principal.js';

export type ClientAuth = 'none' | 'requested' | 'required';
/** The client listeners whose ssl.client.auth may differ from the node's. */
export type ClientListener = 'broker' | 'kafka';
export const CLIENT_AUTH_MODES: readonly ClientAuth[] = ['none', 'requested', 'required'];

/** How often certificate files are checked for changes when not configured (ssl.reload.interval.ms). */
export const TLS_RELOAD_INTERVAL_MS_DEFAULT = 30_000;

/** A connection that has not finished its TLS handshake by then is closed (a slow or stuck client). */
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;

export interface TlsSettings {
  readonly keystoreLocation: string;
  readonly keyPassword: string | undefined;
  /** Absent: the system's CAs (then client certificates cannot be required). */
  readonly truststoreLocation: string | undefined;
  readonly clientAuth: ClientAuth;
  /** Overrides of clientAuth for the broker (WebSocket) and the Kafka listener (Kafka's listener.name.<name>.ssl.client.auth). */
  readonly listenerClientAuth: Readonly<Partial<Record<ClientListener, ClientAuth>>>;
  readonly principalRules: readonly MappingRule[];
  /** Whether a dialed peer's certificate must name the host dialed (Kafka's default, "https"). */
  readonly endpointIdentification: boolean;
  readonly reloadIntervalMs: number;
}

/** The raw setting values (flags or config-file keys), before checking. */
export interface TlsFlags {
  readonly sslKeystoreLocation?: string;
  readonly sslKeyPassword?: string;
  readonly sslTruststoreLocation?: string;
  readonly sslClientAuth?: string;
  readonly brokerSslClientAuth?: string;
  readonly kafkaSslClientAuth?: string;
  readonly sslPrincipalMappingRules?: string;
  readonly sslEndpointIdentificationAlgorithm?: string;
  readonly sslReloadIntervalMs?: number;
}

function invalid(message: string): SluiceError {
  return new SluiceError(Errors.INVALID_CONFIG, message);
}

/** The checked settings, or undefined when no keystore is named; INVALID_CONFIG on a bad value. */
export function tlsSettingsFrom(f: TlsFlags): TlsSettings | undefined {
  if (f.sslKeystoreLocation === undefined || f.sslKeystoreLocation === '') {
    const stray = (['sslKeyPassword', 'sslTruststoreLocation', 'sslClientAuth', 'brokerSslClientAuth', 'kafkaSslClientAuth'] as const).find((k) => f[k] !== undefined);
    if (stray) throw invalid(`${flagName(stray)} needs ssl.keystore.location (--ssl-keystore-location): a node's TLS identity`);
    return undefined;
  }
  const mode = (key: string, value: string | undefined, dflt: ClientAuth): ClientAuth => {
    const m = (value ?? dflt) as ClientAuth;
    if (!CLIENT_AUTH_MODES.includes(m)) throw invalid(`${key} must be one of ${CLIENT_AUTH_MODES.join(', ')}, got '${value}'`);
    if (m !== 'none' && f.sslTruststoreLocation === undefined) {
      throw invalid(`${key}=${m} needs ssl.truststore.location: the CA client certificates are checked against`);
    }
    return m;
  };
  const clientAuth = mode('ssl.client.auth', f.sslClientAuth, 'none');
  const listenerClientAuth: Partial<Record<ClientListener, ClientAuth>> = {};
  if (f.brokerSslClientAuth !== undefined) listenerClientAuth.broker = mode('listener.name.broker.ssl.client.auth', f.brokerSslClientAuth, clientAuth);
  if (f.kafkaSslClientAuth !== undefined) listenerClientAuth.kafka = mode('listener.name.kafka.ssl.client.auth', f.kafkaSslClientAuth, clientAuth);
  const algorithm = (f.sslEndpointIdentificationAlgorithm ?? 'https').toLowerCase();
  if (algorithm !== 'https' && algorithm !== '') throw invalid(`ssl.endpoint.identification.algorithm must be https or empty, got '${algorithm}'`);
  const reloadIntervalMs = f.sslReloadIntervalMs ?? TLS_RELOAD_INTERVAL_MS_DEFAULT;
  if (!(Number.isSafeInteger(reloadIntervalMs) && reloadIntervalMs >= 0)) throw invalid('ssl.reload.interval.ms must be a non-negative integer (0: never reload)');
  const settings: TlsSettings = {
    keystoreLocation: f.sslKeystoreLocation,
    keyPassword: f.sslKeyPassword,
    truststoreLocation: f.sslTruststoreLocation,
    clientAuth,
    listenerClientAuth,
    principalRules: parseMappingRules(f.sslPrincipalMappingRules ?? 'DEFAULT'),
    endpointIdentification: algorithm === 'https',
    reloadIntervalMs,
  };
  loadTlsMaterial(settings); // bad files fail here, at start-up, with their reason
  return settings;
}

function flagName(key: keyof TlsFlags): string {
  return key.replace(/[A-Z]/g, (c) => `.${c.toLowerCase()}`);
}

/** One consistent set of PEM texts, as read from the files. */
export interface TlsMaterial {
  readonly key: string;
  readonly cert: string;
  readonly ca: string | undefined;
  readonly passphrase: string | undefined;
  /** SHA-256 fingerprint of the node's certificate (what a reload log line and a test compare). */
  readonly fingerprint: string;
  readonly subject: string;
  readonly validTo: string;
  /** A digest of the files' bytes: a poll that sees the same stamp has nothing to do. */
  readonly stamp: string;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

function readPem(file: string, what: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw invalid(`${what} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

function blocks(text: string): Array<{ label: string; pem: string }> {
  return [...text.matchAll(PEM_BLOCK)].map((m) => ({ label: m[1]!, pem: m[0] }));
}

/** Reads and checks the files; INVALID_CONFIG naming the file when anything is wrong. */
export function loadTlsMaterial(s: TlsSettings): TlsMaterial {
  const ks = readPem(s.keystoreLocation, 'ssl.keystore.location');
  const parts = blocks(ks);
  const certs = parts.filter((b) => b.label === 'CERTIFICATE');
  const keys = parts.filter((b) => b.label.endsWith('PRIVATE KEY'));
  const where = `ssl.keystore.location ${s.keystoreLocation}`;
  if (certs.length === 0) throw invalid(`${where}: no PEM certificate in it (expected the certificate chain and the private key)`);
  if (keys.length !== 1) throw invalid(`${where}: expected exactly one PEM private key, found ${keys.length}`);
  let leaf: crypto.X509Certificate;
  try {
    leaf = new crypto.X509Certificate(certs[0]!.pem);
    for (const c of certs.slice(1)) new crypto.X509Certificate(c.pem);
  } catch (err) {
    throw invalid(`${where}: a certificate does not parse (${(err as Error).message})`);
  }
  let privateKey: crypto.KeyObject;
  try {
    privateKey = crypto.createPrivateKey({ key: keys[0]!.pem, ...(s.keyPassword !== undefined ? { passphrase: s.keyPassword } : {}) });
  } catch (err) {
    const msg = (err as Error).message;
    const why = /passphrase|decrypt/i.test(msg) ? 'the private key is encrypted and ssl.key.password is missing or wrong' : `the private key does not parse (${msg})`;
    throw invalid(`${where}: ${why}`);
  }
  if (!leaf.checkPrivateKey(privateKey)) throw invalid(`${where}: the private key does not belong to the first certificate`);
  let ca: string | undefined;
  if (s.truststoreLocation !== undefined) {
    const ts = readPem(s.truststoreLocation, 'ssl.truststore.location');
    const cas = blocks(ts).filter((b) => b.label === 'CERTIFICATE');
    if (cas.length === 0) throw invalid(`ssl.truststore.location ${s.truststoreLocation}: no PEM certificate in it`);
    try {
      for (const c of cas) new crypto.X509Certificate(c.pem);
    } catch (err) {
      throw invalid(`ssl.truststore.location ${s.truststoreLocation}: a certificate does not parse (${(err as Error).message})`);
    }
    ca = cas.map((c) => c.pem).join('\n');
  }
  const material: TlsMaterial = {
    key: keys[0]!.pem, cert: certs.map((c) => c.pem).join('\n'), ca, passphrase: s.keyPassword,
    fingerprint: leaf.fingerprint256, subject: rfc2253(leaf.subject), validTo: leaf.validTo,
    stamp: crypto.createHash('sha256').update(ks).update('\0').update(ca ?? '').digest('hex'),
  };
  try {
    tls.createSecureContext(secureContextOptions(material));
  } catch (err) {
    throw invalid(`${where}: TLS refuses the key and certificates (${(err as Error).message})`);
  }
  return material;
}

function secureContextOptions(m: TlsMaterial): tls.SecureContextOptions {
  return { key: m.key, cert: m.cert, ...(m.ca !== undefined ? { ca: m.ca } : {}), ...(m.passphrase !== undefined ? { passphrase: m.passphrase } : {}) };
}

/** The stamp of the files as they are now, or null when one cannot be read (mid-replacement). */
function currentStamp(s: TlsSettings): string | null {
  try {
    const ks = fs.readFileSync(s.keystoreLocation, 'utf8');
    const ts = s.truststoreLocation !== undefined ? fs.readFileSync(s.truststoreLocation, 'utf8') : undefined;
    let ca = '';
    if (ts !== undefined) ca = blocks(ts).filter((b) => b.label === 'CERTIFICATE').map((c) => c.pem).join('\n');
    return crypto.createHash('sha256').update(ks).update('\0').update(ca).digest('hex');
  } catch {
    return null;
  }
}

/** What a connection's certificate says: a session to set, or why the connection must close. */
export type PeerVerdict = { readonly ok: true; readonly session: SecuritySession } | { readonly ok: false; readonly reason: string };

export class TlsContext {
  private material: TlsMaterial;
  private readonly servers = new Set<tls.Server>();
  private cancelPoll: (() => void) | null = null;
  /** The stamp of files that failed to load: logged once, not on every poll. */
  private badStamp: string | null = null;

  constructor(readonly settings: TlsSettings, private readonly log: Logger, private readonly scheduler: Scheduler) {
    this.material = loadTlsMaterial(settings);
  }

  get current(): TlsMaterial {
    return this.material;
  }

  /** Options for tls.createServer / https.createServer. */
  serverOptions(listener?: ClientListener): tls.TlsOptions {
    const auth = (listener ? this.settings.listenerClientAuth[listener] : undefined) ?? this.settings.clientAuth;
    // 'required' fails the handshake without a good certificate; 'requested'
    // lets it through and checks the certificate afterwards (checkPeer).
    return { ...secureContextOptions(this.material), requestCert: auth !== 'none', rejectUnauthorized: auth === 'required', minVersion: 'TLSv1.2', handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS };
  }

  /** Options for dialing a TLS peer (ws's WebSocket options, tls.connect): our certificate, our trust. */
  clientOptions(): tls.ConnectionOptions {
    return {
      ...secureContextOptions(this.material), rejectUnauthorized: true, minVersion: 'TLSv1.2',
      ...(this.settings.endpointIdentification ? {} : { checkServerIdentity: () => undefined }),
    };
  }

  /**
   * Makes a server follow this context: reloads reach it, a client
   * certificate that does not verify ends the connection, handshake
   * failures are logged. Returns the detach function.
   */
  attach(server: tls.Server, what: string): () => void {
    this.servers.add(server);
    server.on('tlsClientError', (err, socket) => {
      this.log.warn({ listener: what, remote: socket.remoteAddress, reason: err.message }, 'TLS handshake failed');
    });
    return () => this.servers.delete(server);
  }

  /** The security session of an accepted TLS connection (principal from its client certificate), or a refusal. */
  checkPeer(socket: tls.TLSSocket): PeerVerdict {
    const cert = socket.getPeerX509Certificate();
    if (!cert) return { ok: true, session: { principal: ANONYMOUS, mechanism: null, tls: true, expiresAtMs: null } };
    if (!socket.authorized) return { ok: false, reason: `client certificate refused: ${String(socket.authorizationError)}` };
    const dn = rfc2253(cert.subject);
    const name = applyMappingRules(this.settings.principalRules, dn);
    if (name === null) return { ok: false, reason: `no ssl.principal.mapping.rules rule matches '${dn}'` };
    return { ok: true, session: { principal: { type: 'User', name }, mechanism: 'SSL', tls: true, expiresAtMs: null } };
  }

  /** Starts polling the files (every reloadIntervalMs; 0: never). */
  start(): void {
    if (this.settings.reloadIntervalMs <= 0 || this.cancelPoll) return;
    const tick = (): void => {
      this.reloadIfChanged();
      this.cancelPoll = this.scheduler.schedule(this.settings.reloadIntervalMs, tick);
    };
    this.cancelPoll = this.scheduler.schedule(this.settings.reloadIntervalMs, tick);
  }

  stop(): void {
    this.cancelPoll?.();
    this.cancelPoll = null;
    this.servers.clear();
  }

  /** Loads the files if they changed; true when a new context is in use. */
  reloadIfChanged(): boolean {
    const stamp = currentStamp(this.settings);
    if (stamp === null || stamp === this.material.stamp || stamp === this.badStamp) return false;
    let next: TlsMaterial;
    try {
      next = loadTlsMaterial(this.settings);
    } catch (err) {
      this.badStamp = stamp;
      this.log.error({ err: (err as Error).message.replace(/^INVALID_CONFIG: /, '') }, 'new TLS files refused; keeping the certificate in use');
      return false;
    }
    this.badStamp = null;
    this.material = next;
    const options = this.serverOptions();
    for (const server of this.servers) server.setSecureContext(options);
    this.log.info({ fingerprint: next.fingerprint, subject: next.subject, validTo: next.validTo }, 'TLS certificate reloaded');
    return true;
  }
}

/** Whether a listener or peer URL asks for TLS (wss://, or Kafka's SSL:// and SASL_SSL://). */
export function isTlsUrl(url: string): boolean {
  return /^(wss|ssl|sasl_ssl):\/\//i.test(url.trim());
}

/** What a dialer needs: the options of the next TLS dial (a TlsContext, or fixed options for a CLI command). */
export interface TlsDialer {
  clientOptions(): tls.ConnectionOptions;
}

/** The TLS options of a dial: the dialer's client options for a TLS URL, none otherwise (a wss:// URL without a dialer uses the system's CAs). */
export function dialOptions(url: string, dialer: TlsDialer | undefined): tls.ConnectionOptions {
  return dialer && isTlsUrl(url) ? dialer.clientOptions() : {};
}

/** A dialer with fixed PEM texts (the CLI's --tls-ca/--tls-cert/--tls-key). */
export function fixedDialer(opts: { readonly ca?: string; readonly cert?: string; readonly key?: string }): TlsDialer {
  const options: tls.ConnectionOptions = { ...opts, rejectUnauthorized: true, minVersion: 'TLSv1.2' };
  return { clientOptions: () => options };
}
