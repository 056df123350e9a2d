import { expect } from 'chai';
import { isSluiceError } from '../../src/util/errors.js';
import {
  electionTimeoutMaxMs, formatQuorum, nodeLimits, parseListenUrl, parseQuorum,
} from '../../src/raft-node/quorum-config.js';

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(isSluiceError(err), String(err)).to.equal(true);
    return (err as Error).message;
  }
  throw new Error('expected an INVALID_CONFIG error');
}

describe('quorum config', () => {
  it('parses Kafka-style voter lists', () => {
    const q = parseQuorum('1@127.0.0.1:9093, 2@localhost:9095,3@[::1]:9097');
    expect(q.map((v) => [v.id, v.host, v.port, v.url])).to.deep.equal([
      [1, '127.0.0.1', 9093, 'ws://127.0.0.1:9093'],
      [2, 'localhost', 9095, 'ws://localhost:9095'],
      [3, '::1', 9097, 'ws://[::1]:9097'],
    ]);
  });

  it('formats a quorum canonically whatever the order it was written in', () => {
    expect(formatQuorum(parseQuorum('2@h:2,1@h:1'))).to.equal(formatQuorum(parseQuorum('1@h:1,2@h:2')));
  });

  it('rejects malformed voter lists with a reason', () => {
    expect(configError(() => parseQuorum(''))).to.match(/empty/);
    expect(configError(() => parseQuorum('1@h:1,1@h:2'))).to.match(/twice/);
    expect(configError(() => parseQuorum('0@h:1'))).to.match(/positive/);
    expect(configError(() => parseQuorum('x@h:1'))).to.match(/positive/);
    expect(configError(() => parseQuorum('1h:1'))).to.match(/id@host:port/);
    expect(configError(() => parseQuorum('1@h:70000'))).to.match(/port/);
    expect(configError(() => parseQuorum('1@h'))).to.match(/host:port/);
  });

  it('parses ws:// listeners only', () => {
    expect(parseListenUrl('ws://0.0.0.0:9093')).to.deep.equal({ host: '0.0.0.0', port: 9093, url: 'ws://0.0.0.0:9093' });
    expect(configError(() => parseListenUrl('http://h:1'))).to.match(/ws:\/\//);
    expect(configError(() => parseListenUrl('ws://h:0'))).to.match(/port/);
  });

  it('checks limits and derives the election timeout bound', () => {
    const l = nodeLimits();
    expect(electionTimeoutMaxMs(l)).to.equal(2 * l.electionTimeoutTicks * l.tickMs);
    expect(configError(() => nodeLimits({ tickMs: 0 }))).to.match(/tickMs/);
    expect(configError(() => nodeLimits({ electionTimeoutTicks: 1, heartbeatTicks: 1 }))).to.match(/greater/);
  });
});
