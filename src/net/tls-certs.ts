// Throw-away certificates: a CA, and certificates it signs for nodes and
// clients — what `sluice local --tls` writes so a newcomer can try TLS in one
// command, and what the TLS tests run on. Not a PKI: keys are RSA 2048 made
// by Node's crypto (fast, native); node-forge writes and signs the X.509
// structures, which Node cannot do itself. Serial numbers come from the
// system's CSPRNG (certificates are security material, not simulation state).

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import forge from 'node-forge';
import { SystemClock, type Clock } from '../util/clock.js';

export interface KeyPair {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface IssueOptions {
  /** The subject, most general first: e.g. [['O', 'sluice'], ['CN', 'node-1']]. */
  readonly subject: ReadonlyArray<readonly [string, string]>;
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
  readonly validDays?: number;
  /** Days before now the certificate starts being valid (0: now). */
  readonly notBeforeDaysAgo?: number;
  /** Where "now" comes from for the validity period (default: the system clock). */
  readonly clock?: Clock;
}

const SHORT_NAMES: Readonly<Record<string, string>> = { CN: 'commonName', O: 'organizationName', OU: 'organizationalUnitName', C: 'countryName', L: 'localityName', ST: 'stateOrProvinceName' };

function attrs(subject: IssueOptions['subject']): forge.pki.CertificateField[] {
  return subject.map(([k, v]) => {
    const name = SHORT_NAMES[k];
    if (!name) throw new Error(`unsupported subject attribute ${k}`);
    return { name, value: v };
  });
}

function newKeys(): { pub: forge.pki.PublicKey; priv: forge.pki.rsa.PrivateKey; keyPem: string } {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const pubPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  return { pub: forge.pki.publicKeyFromPem(pubPem), priv: forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey, keyPem };
}

function baseCert(pub: forge.pki.PublicKey, opts: IssueOptions): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = pub;
  // A positive serial: the top bit of the first byte cleared.
  const serial = crypto.randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  cert.serialNumber = serial.toString('hex');
  const now = (opts.clock ?? SystemClock).nowMs();
  cert.validity.notBefore = new Date(now - (opts.notBeforeDaysAgo ?? 0) * 86_400_000 - 60_000);
  cert.validity.notAfter = new Date(now + (opts.validDays ?? 365) * 86_400_000);
  cert.setSubject(attrs(opts.subject));
  return cert;
}

/** A self-signed CA certificate and its key. */
export function createCa(opts: IssueOptions): KeyPair {
  const keys = newKeys();
  const cert = baseCert(keys.pub, opts);
  cert.setIssuer(attrs(opts.subject));
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.priv, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}

/** A certificate signed by `ca`, good for both TLS server and client use (a node is both). */
export function issueCert(ca: KeyPair, opts: IssueOptions): KeyPair {
  const keys = newKeys();
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const cert = baseCert(keys.pub, opts);
  cert.setIssuer(caCert.subject.attributes);
  const altNames = [
    ...(opts.dnsNames ?? []).map((value) => ({ type: 2, value })),
    ...(opts.ipAddresses ?? []).map((ip) => ({ type: 7, ip })),
  ];
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
    ...(altNames.length > 0 ? [{ name: 'subjectAltName', altNames }] : []),
  ]);
  cert.sign(forge.pki.privateKeyFromPem(ca.keyPem) as forge.pki.rsa.PrivateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.keyPem };
}

/** Writes `pair` as one PEM file (certificate, then key): what ssl.keystore.location reads. Mode 0600. */
export function writeKeystore(file: string, pair: KeyPair): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${pair.certPem.trim()}\n${pair.keyPem.trim()}\n`, { mode: 0o600 });
}

export interface LocalTlsFiles {
  readonly dir: string;
  /** ssl.truststore.location of every node and --tls-ca of clients. */
  readonly caFile: string;
  /** Node id → its keystore (certificate and key, PEM). */
  readonly nodeKeystores: ReadonlyMap<number, string>;
  /** A client certificate for the CLI (CN=sluice-cli): certificate and key files. */
  readonly clientCert: string;
  readonly clientKey: string;
}

/** The files `sluice local --tls` uses: a CA and one certificate per node, for 127.0.0.1 and localhost, plus a CLI client certificate. */
export function writeLocalTlsFiles(dir: string, nodeIds: readonly number[], host: string): LocalTlsFiles {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ca = createCa({ subject: [['O', 'sluice local'], ['CN', 'sluice local CA']], validDays: 30 });
  const caFile = path.join(dir, 'ca.pem');
  fs.writeFileSync(caFile, ca.certPem);
  fs.writeFileSync(path.join(dir, 'ca-key.pem'), ca.keyPem, { mode: 0o600 });
  const nodeKeystores = new Map<number, string>();
  const ipAddresses = [...new Set([host, '127.0.0.1'].filter((h) => /^[\d.]+$/.test(h)))];
  for (const id of nodeIds) {
    const file = path.join(dir, `node-${id}.pem`);
    writeKeystore(file, issueCert(ca, { subject: [['O', 'sluice local'], ['CN', `node-${id}`]], dnsNames: ['localhost'], ipAddresses, validDays: 30 }));
    nodeKeystores.set(id, file);
  }
  const client = issueCert(ca, { subject: [['O', 'sluice local'], ['CN', 'sluice-cli']], validDays: 30 });
  const clientCert = path.join(dir, 'client-cert.pem');
  const clientKey = path.join(dir, 'client-key.pem');
  fs.writeFileSync(clientCert, client.certPem);
  fs.writeFileSync(clientKey, client.keyPem, { mode: 0o600 });
  return { dir, caFile, nodeKeystores, clientCert, clientKey };
}
