import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readServerConfigFile } from '../../src/server/config-file.js';
import { DEFAULT_LOG_MANAGER_CONFIG } from '../../src/storage/log-config.js';
import { parseQuorum } from '../../src/raft-node/quorum-config.js';
import { deriveClusterId, parseRoles, serverConfigFromFlags, type ServerFlags } from '../../src/server/config.js';

const base: ServerFlags = {
  nodeId: 2,
  roles: 'controller',
  controllerListen: 'ws://127.0.0.1:9095',
  controllerQuorum: '1@127.0.0.1:9093,2@127.0.0.1:9095,3@127.0.0.1:9097',
  dataDir: 'data/node-2',
};

describe('server config', () => {
  it('builds a config from the documented flags', () => {
    const cfg = serverConfigFromFlags({ ...base, electionTimeoutMs: 1000, snapshotIntervalEntries: 500 });
    expect(cfg.nodeId).to.equal(2);
    expect(cfg.roles).to.deep.equal(['controller']);
    expect(cfg.quorum.map((v) => v.id)).to.deep.equal([1, 2, 3]);
    expect(cfg.controllerListen.port).to.equal(9095);
    expect(cfg.nodeLimits.electionTimeoutTicks * cfg.nodeLimits.tickMs).to.equal(1000);
    expect(cfg.nodeLimits.snapshotIntervalEntries).to.equal(500);
    expect(cfg.clusterId).to.equal(undefined);
  });

  it('derives the same cluster id on every voter, whatever the flag order', () => {
    const a = deriveClusterId(parseQuorum('1@h:1,2@h:2,3@h:3'));
    const b = deriveClusterId(parseQuorum('3@h:3,1@h:1,2@h:2'));
    expect(a).to.equal(b).and.match(/^[A-Za-z0-9_-]{22}$/);
    expect(deriveClusterId(parseQuorum('1@h:1,2@h:2'))).to.not.equal(a);
  });

  it('rejects what cannot work, with a reason', () => {
    expect(() => parseRoles('controller,chef')).to.throw(/unknown role 'chef'/);
    expect(() => serverConfigFromFlags({ ...base, nodeId: 4 })).to.throw(/not in --controller-quorum/);
    expect(() => serverConfigFromFlags({ ...base, nodeId: 0 })).to.throw(/positive integer/);
    expect(() => serverConfigFromFlags({ ...base, clusterId: 'has space' })).to.throw(/cluster-id/);
    expect(() => serverConfigFromFlags({ ...base, logLevel: 'loud' })).to.throw(/log-level/);
    expect(() => serverConfigFromFlags({ ...base, electionTimeoutMs: 10 })).to.throw(/election-timeout-ms/);
    expect(() => serverConfigFromFlags({ ...base, controllerListen: 'tcp://x:1' })).to.throw(/ws:\/\//);
  });

  it('takes advertised URLs and an outbound address, and refuses ones nobody can dial', () => {
    const broker = { ...base, roles: 'broker,controller', listen: 'ws://127.0.0.1:9092' };
    const cfg = serverConfigFromFlags({
      ...broker, advertisedListen: 'ws://127.0.0.2:7001', advertisedControllerListen: 'ws://127.0.0.2:7002', outboundAddress: '127.0.0.12',
    });
    expect(cfg.broker?.advertisedUrl).to.equal('ws://127.0.0.2:7001');
    expect(cfg.advertisedControllerUrl).to.equal('ws://127.0.0.2:7002');
    expect(cfg.outboundAddress).to.equal('127.0.0.12');
    expect(serverConfigFromFlags(broker).broker?.advertisedUrl).to.equal(undefined);
    expect(() => serverConfigFromFlags({ ...broker, advertisedListen: 'ws://127.0.0.2:0' })).to.throw(/bad port '0'/);
    expect(() => serverConfigFromFlags({ ...broker, advertisedListen: 'ws://0.0.0.0:7001' })).to.throw(/others can dial/);
    expect(() => serverConfigFromFlags({ ...broker, advertisedControllerListen: 'http://h:1' })).to.throw(/ws:\/\//);
    expect(() => serverConfigFromFlags({ ...broker, outboundAddress: 'localhost' })).to.throw(/outbound-address must be an IP/);
    expect(() => serverConfigFromFlags({ ...base, advertisedListen: 'ws://127.0.0.2:7001' })).to.throw(/add broker to --roles/);
  });
});

describe('server config: log manager keys', () => {
  const broker: ServerFlags = { ...base, roles: 'broker,controller', listen: 'ws://127.0.0.1:9092' };

  it('reads the log manager settings (tail cache, checkpoint timers) from the same log keys, defaults otherwise', () => {
    expect(serverConfigFromFlags(broker).broker!.logManagerConfig).to.deep.equal(DEFAULT_LOG_MANAGER_CONFIG);
    const cfg = serverConfigFromFlags({
      ...broker, logConfig: JSON.stringify({ 'log.tail.cache.bytes': '0', 'replica.high.watermark.checkpoint.interval.ms': '1000', 'log.segment.bytes': '1048576' }),
    });
    expect(cfg.broker!.logManagerConfig.tailCacheBytes, 'off').to.equal(0);
    expect(cfg.broker!.logManagerConfig.highWatermarkCheckpointIntervalMs).to.equal(1000);
    expect(cfg.broker!.logConfig.segmentBytes).to.equal(1048576);
    expect(() => serverConfigFromFlags({ ...broker, logConfig: JSON.stringify({ 'log.tail.cache.bytes': '-1' }) })).to.throw(/log.tail.cache.bytes=-1/);
  });

  it('takes them from a config file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-config-'));
    try {
      const file = path.join(dir, 'server.properties');
      fs.writeFileSync(file, 'log.tail.cache.bytes=1048576\nlog.flush.offset.checkpoint.interval.ms=2000\n');
      const flags = readServerConfigFile(file);
      const cfg = serverConfigFromFlags({ ...broker, logConfig: flags.logConfig as string });
      expect(cfg.broker!.logManagerConfig.tailCacheBytes).to.equal(1048576);
      expect(cfg.broker!.logManagerConfig.flushOffsetCheckpointIntervalMs).to.equal(2000);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('server config: the Kafka listener', () => {
  const broker: ServerFlags = { ...base, roles: 'broker,controller', listen: 'ws://127.0.0.1:9092' };

  it('takes HOST:PORT or PLAINTEXT://HOST:PORT, an advertised address, and auto.create.topics.enable', () => {
    expect(serverConfigFromFlags({ ...broker, kafkaListen: '127.0.0.1:9192' }).broker?.kafkaListen).to.deep.equal({ host: '127.0.0.1', port: 9192, securityProtocol: 'PLAINTEXT' });
    expect(serverConfigFromFlags({ ...broker, kafkaListen: 'PLAINTEXT://0.0.0.0:9192' }).broker?.kafkaListen).to.deep.equal({ host: '0.0.0.0', port: 9192, securityProtocol: 'PLAINTEXT' });
    expect(serverConfigFromFlags({ ...broker, kafkaListen: '[::1]:9192' }).broker?.kafkaListen).to.deep.equal({ host: '::1', port: 9192, securityProtocol: 'PLAINTEXT' });
    const adv = serverConfigFromFlags({ ...broker, kafkaListen: '0.0.0.0:9192', kafkaAdvertisedListen: 'kafka.example:19192' });
    expect(adv.broker?.kafkaAdvertised).to.deep.equal({ host: 'kafka.example', port: 19192 });
    expect(serverConfigFromFlags(broker).broker?.kafkaListen).to.equal(undefined);
    expect(serverConfigFromFlags(broker).broker?.autoCreateTopics).to.equal(true);
    expect(serverConfigFromFlags({ ...broker, autoCreateTopicsEnable: false }).broker?.autoCreateTopics).to.equal(false);
  });

  it('refuses malformed addresses, an advertised one without a listener or nobody can dial, and a node without the broker role', () => {
    expect(() => serverConfigFromFlags({ ...broker, kafkaListen: 'ws://127.0.0.1:9192' })).to.throw(/HOST:PORT or PROTOCOL/);
    expect(() => serverConfigFromFlags({ ...broker, kafkaListen: '127.0.0.1' })).to.throw(/HOST:PORT/);
    expect(() => serverConfigFromFlags({ ...broker, kafkaListen: '127.0.0.1:99999' })).to.throw(/HOST:PORT/);
    expect(() => serverConfigFromFlags({ ...broker, kafkaAdvertisedListen: 'h:1' })).to.throw(/needs --kafka-listen/);
    expect(() => serverConfigFromFlags({ ...broker, kafkaListen: '127.0.0.1:0', kafkaAdvertisedListen: '0.0.0.0:1' })).to.throw(/clients can dial/);
    expect(() => serverConfigFromFlags({ ...base, kafkaListen: '127.0.0.1:9192' })).to.throw(/add broker to --roles/);
  });

  it('reads kafka.listeners, kafka.advertised.listeners and auto.create.topics.enable from a config file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-config-'));
    try {
      const file = path.join(dir, 'server.properties');
      fs.writeFileSync(file, 'kafka.listeners=PLAINTEXT://127.0.0.1:9192\nkafka.advertised.listeners=PLAINTEXT://h:9192\nauto.create.topics.enable=false\n');
      const flags = readServerConfigFile(file);
      const cfg = serverConfigFromFlags({ ...broker, ...flags } as ServerFlags);
      expect(cfg.broker?.kafkaListen).to.deep.equal({ host: '127.0.0.1', port: 9192, securityProtocol: 'PLAINTEXT' });
      expect(cfg.broker?.kafkaAdvertised).to.deep.equal({ host: 'h', port: 9192 });
      expect(cfg.broker?.autoCreateTopics).to.equal(false);
      fs.writeFileSync(file, 'auto.create.topics.enable=maybe\n');
      expect(() => readServerConfigFile(file)).to.throw(/true or false/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
