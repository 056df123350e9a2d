// `sluice topics|configs|cluster` without a cluster: flag shapes are usage
// errors (exit 2, usage and a one-line reason), a dead bootstrap is one line
// naming the address (exit 1), and the pure parts (k=v parsing, the quorum
// view built from node statuses) behave as documented.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { parseKeyValues } from '../../src/cli/commands/configs.js';
import { quorumView } from '../../src/cli/commands/cluster.js';
import type { StatusResult } from '../../src/raft-node/client-service.js';
import { freePorts } from '../integration/harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.resolve(here, '../../src/cli/main.js');

interface Run { status: number | null; stdout: string; stderr: string }

function sluice(...args: string[]): Promise<Run> {
  const env = { ...process.env };
  delete env.SLUICE_BOOTSTRAP;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

function lastLine(r: Run): string {
  return r.stderr.trim().split('\n').at(-1) ?? '';
}

describe('sluice topics/configs/cluster: usage', function () {
  this.timeout(30_000);

  const usage: Array<[string[], RegExp]> = [
    [['topics'], /Name an action/],
    [['topics', 'nope'], /Unknown command: nope/],
    [['topics', 'create'], /Missing required argument: topic/],
    [['topics', 'create', '--topic', 't', '--partitions', 'ten'], /--partitions needs a number/],
    [['topics', 'create', '--topic', 't', '--replication-factor', 'x'], /--replication-factor needs a number/],
    [['topics', 'create', '--topic', 't', '--config', 'noequals'], /--config takes key=value/],
    [['topics', 'create', '--topic', 't', '--bogus'], /Unknown argument: bogus/],
    [['topics', 'alter', '--topic', 't'], /Nothing to change/],
    [['topics', 'delete'], /Missing required argument: topic/],
    [['configs', 'describe'], /exactly one resource/],
    [['configs', 'describe', '--topic', 't', '--cluster'], /exactly one resource/],
    [['configs', 'alter', '--cluster'], /Nothing to change/],
    [['configs', 'alter', '--topic', 't', '--set', '=v'], /--set takes key=value/],
    [['cluster'], /Name an action: status/],
    [['cluster', 'status', '--bogus'], /Unknown argument: bogus/],
  ];
  // Every case runs at once (each is a separate process start); the its check the results.
  const runs = new Map<string, Promise<Run>>();
  before(() => {
    for (const [args] of usage) runs.set(args.join(' '), sluice(...args));
  });

  for (const [args, reason] of usage) {
    it(`exits 2 with usage for: ${args.join(' ')}`, async () => {
      const r = await runs.get(args.join(' '))!;
      expect(r.status).to.equal(2);
      expect(r.stdout).to.equal('');
      expect(r.stderr).to.contain('Options:');
      expect(lastLine(r)).to.match(reason);
    });
  }

  it('documents every action with examples in --help', async () => {
    const actions = [['topics', 'create'], ['topics', 'list'], ['topics', 'describe'], ['topics', 'alter'], ['topics', 'delete'],
      ['configs', 'describe'], ['configs', 'alter'], ['cluster', 'status']];
    const results = await Promise.all(actions.map((args) => sluice(...args, '--help')));
    results.forEach((r, i) => {
      const what = actions[i]!.join(' ');
      expect(r.status, what).to.equal(0);
      expect(r.stdout, what).to.contain('Examples:');
      expect(r.stdout, what).to.contain('--bootstrap');
      expect(r.stdout, what).to.contain('--json');
    });
  });

  it('fails a dead bootstrap with one line naming the address, exit 1, for each command', async () => {
    const [port] = await freePorts(1);
    const url = `ws://127.0.0.1:${port}`;
    const commands = [['topics', 'list'], ['topics', 'describe'], ['topics', 'create', '--topic', 't'], ['configs', 'describe', '--cluster'], ['cluster', 'status']];
    const results = await Promise.all(commands.map((args) => sluice(...args, '--bootstrap', url, '--request-timeout-ms', '2000')));
    results.forEach((r, i) => {
      const what = commands[i]!.join(' ');
      expect(r.status, what).to.equal(1);
      expect(r.stdout, what).to.equal('');
      const lines = r.stderr.trim().split('\n');
      expect(lines, r.stderr).to.have.length(1);
      expect(lines[0], what).to.match(/^sluice: /).and.to.contain(url);
    });
  });
});

describe('parseKeyValues', () => {
  it('splits at the first =, keeps = in values and empty values', () => {
    expect(parseKeyValues(['a=1', 'b=x=y', 'c='], 'config')).to.deep.equal({ a: '1', b: 'x=y', c: '' });
  });

  it('rejects entries without a key', () => {
    expect(() => parseKeyValues(['novalue'], 'config')).to.throw(/--config takes key=value, got 'novalue'/);
    expect(() => parseKeyValues(['=1'], 'set')).to.throw(/--set/);
  });
});

describe('quorumView', () => {
  const status = (nodeId: number, role: StatusResult['role'], lastIndex: number, over: Partial<StatusResult> = {}): StatusResult => ({
    nodeId, role, term: 4, leader: 2, commit: lastIndex - 1, applied: lastIndex - 1, lastIndex, snapshotIndex: 0,
    voters: [1, 2, 3], observers: [4], pendingProposals: 0, pendingReads: 0, stateMachine: {}, ...over,
  });
  const urls = new Map([[1, 'ws://h:1'], [2, 'ws://h:2'], [4, 'ws://h:4']]);

  it('takes the leader, term and high watermark from the leader and lag from each node\'s own last index', () => {
    const q = quorumView(new Map<string, StatusResult | string>([
      ['ws://h:1', status(1, 'follower', 95)],
      ['ws://h:2', status(2, 'leader', 100)],
      ['ws://h:4', status(4, 'observer', 90)],
    ]), urls);
    expect([q.leaderId, q.term, q.highWatermark]).to.deep.equal([2, 4, 99]);
    expect(q.nodes.map((n) => [n.nodeId, n.kind, n.reachable, n.lag])).to.deep.equal([
      [1, 'voter', true, 5], [2, 'voter', true, 0], [3, 'voter', false, null], [4, 'observer', true, 10],
    ]);
    expect(q.nodes[2]!.error).to.match(/no known endpoint/);
    expect(q.nodes.map((n) => n.recentContact)).to.deep.equal([null, true, null, null]);
  });

  it('takes lag and recent contact from the leader\'s Raft progress when it has it', () => {
    const q = quorumView(new Map<string, StatusResult | string>([
      ['ws://h:1', status(1, 'follower', 95)],
      ['ws://h:2', status(2, 'leader', 100, { progress: [{ nodeId: 1, match: 97, recentActive: true }, { nodeId: 3, match: 40, recentActive: false }, { nodeId: 4, match: 100, recentActive: true }] })],
    ]), urls);
    expect(q.nodes.map((n) => [n.nodeId, n.lag, n.recentContact])).to.deep.equal([[1, 3, true], [2, 0, true], [3, 60, false], [4, 0, true]]);
  });

  it('without an answering leader reports no leader, no high watermark and no lag, and says why nodes are missing', () => {
    const q = quorumView(new Map<string, StatusResult | string>([
      ['ws://h:1', status(1, 'candidate', 95, { term: 5, leader: -1 })],
      ['ws://h:2', 'LEADER_NOT_AVAILABLE: cannot reach ws://h:2: connect ECONNREFUSED'],
    ]), urls);
    expect([q.leaderId, q.term, q.highWatermark]).to.deep.equal([null, 5, null]);
    const two = q.nodes.find((n) => n.nodeId === 2)!;
    expect([two.reachable, two.error]).to.deep.equal([false, 'LEADER_NOT_AVAILABLE: cannot reach ws://h:2: connect ECONNREFUSED']);
    expect(q.nodes.every((n) => n.lag === null)).to.equal(true);
  });
});
