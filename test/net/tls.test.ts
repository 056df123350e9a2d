// TLS settings and files (src/net/tls.ts, tls-principal.ts): Kafka's principal
// mapping rules on distinguished names, and every bad setting or file is a
// clear INVALID_CONFIG naming what is wrong — on bytes and files, no sockets.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { applyMappingRules, parseMappingRules, rfc2253 } from '../../src/net/tls-principal.js';
import { TlsContext, loadTlsMaterial, tlsSettingsFrom } from '../../src/net/tls.js';
import { createCa, issueCert, writeKeystore, type KeyPair } from '../../src/net/tls-certs.js';
import { serverConfigFromFlags, type ServerFlags } from '../../src/server/config.js';
import { readServerConfigFile } from '../../src/server/config-file.js';
import { ManualScheduler } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

describe('TLS principal mapping rules (ssl.principal.mapping.rules)', () => {
  it('DEFAULT keeps the RFC 2253 name; a RULE maps the whole name, with L/U and commas inside its pattern', () => {
    const dn = 'CN=Alice,OU=dev,O=acme';
    expect(applyMappingRules(parseMappingRules('DEFAULT'), dn)).to.equal(dn);
    const rules = parseMappingRules('RULE:^CN=(.*?),OU=(.*?),O=acme$/$1@$2/L, RULE:^CN=([^,]+),.*$/$1/U,DEFAULT');
    expect(rules).to.have.length(3);
    expect(applyMappingRules(rules, dn)).to.equal('alice@dev');
    expect(applyMappingRules(rules, 'CN=bob,O=other')).to.equal('BOB');
    expect(applyMappingRules(parseMappingRules('RULE:^CN=x$/y/'), 'CN=z')).to.equal(null);
    expect(applyMappingRules(parseMappingRules('RULE:^CN=a\\/b$/ok/'), 'CN=a/b')).to.equal('ok');
  });

  it('refuses malformed rule lists', () => {
    for (const bad of ['', 'NOPE', 'RULE:abc', 'RULE:a/b', 'RULE:(/x/', 'DEFAULTX']) {
      expect(() => parseMappingRules(bad), bad).to.throw(/INVALID_CONFIG: ssl.principal.mapping.rules/);
    }
  });

  it('turns Node\'s subject text into Java\'s RFC 2253 order, escaping specials', () => {
    expect(rfc2253('C=US\nO=acme\nCN=alice')).to.equal('CN=alice,O=acme,C=US');
    expect(rfc2253('O=a, b\nCN=c')).to.equal('CN=c,O=a\\, b');
  });
});

describe('TLS settings and files', function () {
  this.timeout(30_000);
  let dir: string;
  let keystore: string;
  let truststore: string;
  let ca: KeyPair;
  let pair: KeyPair;

  before(() => {
    ca = createCa({ subject: [['CN', 'unit CA']] });
    pair = issueCert(ca, { subject: [['CN', 'node-1']], ipAddresses: ['127.0.0.1'] });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-tls-unit-'));
    keystore = path.join(dir, 'node.pem');
    truststore = path.join(dir, 'ca.pem');
    writeKeystore(keystore, pair);
    fs.writeFileSync(truststore, ca.certPem);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string): string => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, text);
    return f;
  };

  it('loads a keystore and truststore and checks every setting', () => {
    const s = tlsSettingsFrom({ sslKeystoreLocation: keystore, sslTruststoreLocation: truststore, sslClientAuth: 'required' })!;
    expect(s.clientAuth).to.equal('required');
    expect(s.endpointIdentification).to.equal(true);
    expect(loadTlsMaterial(s).subject).to.equal('CN=node-1');
    expect(tlsSettingsFrom({})).to.equal(undefined);
    expect(() => tlsSettingsFrom({ sslTruststoreLocation: truststore })).to.throw(/ssl.truststore.location needs ssl.keystore.location/);
    expect(() => tlsSettingsFrom({ sslKeystoreLocation: keystore, sslClientAuth: 'maybe' })).to.throw(/ssl.client.auth must be one of/);
    expect(() => tlsSettingsFrom({ sslKeystoreLocation: keystore, sslClientAuth: 'required' })).to.throw(/needs ssl.truststore.location/);
    expect(() => tlsSettingsFrom({ sslKeystoreLocation: keystore, sslEndpointIdentificationAlgorithm: 'ldap' })).to.throw(/https or empty/);
    expect(tlsSettingsFrom({ sslKeystoreLocation: keystore, sslEndpointIdentificationAlgorithm: '' })!.endpointIdentification).to.equal(false);
  });

  it('lets the client listeners ask for certificates while the others require them (listener.name.<broker|kafka>.ssl.client.auth)', () => {
    const s = tlsSettingsFrom({ sslKeystoreLocation: keystore, sslTruststoreLocation: truststore, sslClientAuth: 'required', brokerSslClientAuth: 'requested' })!;
    expect(s.listenerClientAuth).to.deep.equal({ broker: 'requested' });
    const ctx = new TlsContext(s, silentLogger, new ManualScheduler());
    expect([ctx.serverOptions('broker').requestCert, ctx.serverOptions('broker').rejectUnauthorized]).to.deep.equal([true, false]);
    expect([ctx.serverOptions('kafka').requestCert, ctx.serverOptions('kafka').rejectUnauthorized]).to.deep.equal([true, true]);
    expect(ctx.serverOptions().rejectUnauthorized).to.equal(true);
    expect(() => tlsSettingsFrom({ sslKeystoreLocation: keystore, sslTruststoreLocation: truststore, kafkaSslClientAuth: 'maybe' }))
      .to.throw(/listener.name.kafka.ssl.client.auth must be one of/);
    expect(() => tlsSettingsFrom({ sslKeystoreLocation: keystore, kafkaSslClientAuth: 'required' })).to.throw(/listener.name.kafka.ssl.client.auth=required needs ssl.truststore.location/);
    expect(() => tlsSettingsFrom({ brokerSslClientAuth: 'requested' })).to.throw(/needs ssl.keystore.location/);
  });

  it('names the file and the reason for every bad file', () => {
    const other = issueCert(ca, { subject: [['CN', 'other']] });
    const cases: Array<[string, RegExp]> = [
      [path.join(dir, 'missing.pem'), /cannot read it \(ENOENT\)/],
      [write('empty.pem', 'nothing here'), /no PEM certificate/],
      [write('nokey.pem', pair.certPem), /exactly one PEM private key, found 0/],
      [write('mismatch.pem', `${pair.certPem}${other.keyPem}`), /does not belong to the first certificate/],
      [write('badcert.pem', `-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n${pair.keyPem}`), /a certificate does not parse/],
    ];
    for (const [file, why] of cases) {
      expect(() => tlsSettingsFrom({ sslKeystoreLocation: file }), file).to.throw(/^INVALID_CONFIG: ssl.keystore.location/).and.to.match(why);
    }
    expect(() => tlsSettingsFrom({ sslKeystoreLocation: keystore, sslTruststoreLocation: write('ts.pem', 'x') })).to.throw(/ssl.truststore.location .*no PEM certificate/);
  });

  it('config: wss:// and SSL:// need a keystore; the voters follow the controller listener\'s scheme; SASL_SSL is TLS too', () => {
    const flags: ServerFlags = {
      nodeId: 1, roles: 'broker,controller', controllerListen: 'wss://127.0.0.1:9093', controllerQuorum: '1@127.0.0.1:9093,2@127.0.0.1:9095',
      dataDir: dir, listen: 'wss://127.0.0.1:9092', kafkaListen: 'SSL://127.0.0.1:9192',
    };
    expect(() => serverConfigFromFlags(flags)).to.throw(/--controller-listen wss:\/\/ needs ssl.keystore.location/);
    const cfg = serverConfigFromFlags({ ...flags, sslKeystoreLocation: keystore, sslTruststoreLocation: truststore });
    expect(cfg.quorum.map((v) => v.url)).to.deep.equal(['wss://127.0.0.1:9093', 'wss://127.0.0.1:9095']);
    expect(cfg.broker?.kafkaListen?.securityProtocol).to.equal('SSL');
    expect(cfg.broker?.listen.url).to.equal('wss://127.0.0.1:9092');
    expect(() => serverConfigFromFlags({ ...flags, kafkaListen: 'SASL_SSL://127.0.0.1:9192' })).to.throw(/needs ssl.keystore.location/);
    expect(serverConfigFromFlags({ ...flags, kafkaListen: 'SASL_SSL://127.0.0.1:9192', sslKeystoreLocation: keystore }).broker?.kafkaListen?.securityProtocol).to.equal('SASL_SSL');
    expect(() => serverConfigFromFlags({ ...flags, kafkaListen: 'TLS://127.0.0.1:9192', sslKeystoreLocation: keystore })).to.throw(/PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL/);
    const plain: ServerFlags = { ...flags, controllerListen: 'ws://127.0.0.1:9093', controllerQuorum: '1@127.0.0.1:9093,2@127.0.0.1:9095', listen: 'ws://127.0.0.1:9092', kafkaListen: '127.0.0.1:9192' };
    expect(() => serverConfigFromFlags({ ...plain, httpListen: 'https://127.0.0.1:9292' })).to.throw(/--http-listen https:\/\/ needs ssl.keystore.location/);
    expect(serverConfigFromFlags({ ...plain, httpListen: 'https://127.0.0.1:9292', sslKeystoreLocation: keystore }).httpListen?.url).to.equal('https://127.0.0.1:9292');
  });

  it('config file: ssl.* keys and listener.security.protocol.map', () => {
    const file = write('server.properties', [
      'listeners=BROKER://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093', 'listener.security.protocol.map=BROKER:SSL,CONTROLLER:SSL',
      `ssl.keystore.location=${keystore}`, 'ssl.keystore.type=PEM', `ssl.truststore.location=${truststore}`, 'ssl.client.auth=required',
      'ssl.principal.mapping.rules=RULE:^CN=([^,]+)$/$1/,DEFAULT', 'ssl.reload.interval.ms=1000', 'listener.name.kafka.ssl.client.auth=requested',
    ].join('\n'));
    const flags = readServerConfigFile(file);
    expect(flags).to.include({ listen: 'wss://127.0.0.1:9092', controllerListen: 'wss://127.0.0.1:9093', sslClientAuth: 'required', sslReloadIntervalMs: 1000, kafkaSslClientAuth: 'requested' });
    expect(() => readServerConfigFile(write('bad.properties', 'ssl.keystore.type=JKS'))).to.throw(/must be PEM/);
  });

  it('reloads changed files on the scheduler\'s tick and keeps the old ones when the new ones are bad', () => {
    const ks = path.join(dir, 'reload.pem');
    writeKeystore(ks, pair);
    const scheduler = new ManualScheduler();
    const ctx = new TlsContext(tlsSettingsFrom({ sslKeystoreLocation: ks, sslReloadIntervalMs: 1000 })!, silentLogger, scheduler);
    ctx.start();
    const first = ctx.current.fingerprint;
    scheduler.advance(1000);
    expect(ctx.current.fingerprint).to.equal(first);
    writeKeystore(ks, issueCert(ca, { subject: [['CN', 'node-1b']] }));
    scheduler.advance(1000);
    expect(ctx.current.subject).to.equal('CN=node-1b');
    fs.writeFileSync(ks, 'half-written');
    scheduler.advance(1000);
    expect(ctx.current.subject).to.equal('CN=node-1b');
    ctx.stop();
  });
});
