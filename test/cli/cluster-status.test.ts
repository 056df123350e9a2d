// `sluice cluster status` rendering: each broker's WebSocket URL and Kafka
// listener (host:port, as bootstrap.servers takes it) shown apart, from the
// endpoints the broker registered.

import { expect } from 'chai';
import { kafkaAddressOf, renderStatus, type ClusterStatus } from '../../src/cli/commands/cluster.js';

const endpoints = (kafka: string | null) => [
  { name: 'BROKER', url: 'ws://10.0.0.1:9092' },
  { name: 'CONTROLLER', url: 'ws://10.0.0.1:9093' },
  ...(kafka ? [{ name: 'KAFKA', url: kafka }] : []),
];

describe('cli: cluster status', () => {
  it('reads a broker\'s Kafka listener from its KAFKA endpoint', () => {
    expect(kafkaAddressOf(endpoints('PLAINTEXT://10.0.0.1:9192'))).to.equal('10.0.0.1:9192');
    expect(kafkaAddressOf(endpoints('PLAINTEXT://[::1]:9192'))).to.equal('[::1]:9192');
    expect(kafkaAddressOf(endpoints(null)), 'no Kafka listener').to.equal(null);
    expect(kafkaAddressOf([{ name: 'KAFKA', url: 'garbage' }])).to.equal(null);
  });

  it('shows both client endpoints of every broker', () => {
    const status: ClusterStatus = {
      clusterId: 'c1', controllerId: 1,
      quorum: { leaderId: 1, term: 3, highWatermark: 10, nodes: [] },
      brokers: [
        { nodeId: 1, state: 'running', rack: null, url: 'ws://10.0.0.1:9092', kafka: '10.0.0.1:9192', endpoints: endpoints('PLAINTEXT://10.0.0.1:9192'), metadataOffset: 10 },
        { nodeId: 2, state: 'fenced', rack: null, url: 'ws://10.0.0.2:9092', kafka: null, endpoints: [], metadataOffset: null },
      ],
      partitions: { total: 0, underReplicated: 0, offline: 0 },
      notes: [],
    };
    const lines = renderStatus(status).split('\n');
    const header = lines.find((l) => l.startsWith('BROKER'))!;
    expect(header).to.match(/WEBSOCKET +KAFKA$/);
    expect(lines.find((l) => l.startsWith('1 '))).to.match(/ws:\/\/10\.0\.0\.1:9092 +10\.0\.0\.1:9192$/);
    expect(lines.find((l) => l.startsWith('2 '))).to.match(/ws:\/\/10\.0\.0\.2:9092 +-$/);
  });
});
