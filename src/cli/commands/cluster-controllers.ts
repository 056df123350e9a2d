// `sluice cluster add-controller` and `remove-controller`: change the
// controller quorum's voters one at a time (Kafka's kafka-metadata-quorum
// add-controller / remove-controller, KIP-853). The active controller does the
// work (src/controller/service/controller-membership.ts); this command finds
// it — through the controller listeners the brokers register, plus any
// --controller urls — asks, and waits for the answer, which comes once the
// change is committed:
//
//   add-controller --node-id N --controller-listen URL
//       N must already run: `sluice server --node-id N --roles controller
//       --join-quorum --controller-listen URL --controller-quorum <voters>`.
//       It is added as an observer, catches up with the metadata log, then is
//       promoted to voter.
//   remove-controller --node-id N
//       N stops being a voter (the active controller itself hands over first).
//
// Refused, with a one-line reason and exit 1, while another change runs, for
// a node that is already a voter (add) or none (remove), for the last voter.

import type { Argv, ArgumentsCamelCase, CommandModule } from 'yargs';
import type { Client } from '../../index.js';
import { QuorumClient } from '../../raft-node/quorum-client.js';
import { METADATA_ENDPOINT } from '../../raft-node/observers.js';
import { fixedDialer } from '../../net/tls.js';
import { print, runClientCommand, tlsOptionsFrom, withClientFlags, type ClientFlags } from '../client-command.js';
import { listOf } from './configs.js';

interface MembershipFlags extends ClientFlags {
  readonly nodeId: number;
  readonly controller?: string[];
  readonly timeoutMs: number;
}

interface AddFlags extends MembershipFlags {
  readonly controllerListen: string;
}

/** What the active controller answers (ControllerChangeResult). */
export interface ControllerChange {
  readonly nodeId: number;
  readonly voters: readonly number[];
  readonly observers: readonly number[];
}

/** How long the active controller may take for one change (it waits for the new node to catch up). */
const CHANGE_TIMEOUT_MS_DEFAULT = 90_000;

function membershipFlags<T>(y: Argv<T>): Argv<T & MembershipFlags> {
  return withClientFlags(y)
    .option('node-id', { type: 'number', demandOption: true, describe: 'the controller\'s node id' })
    .option('controller', { type: 'string', array: true, describe: 'controller (Raft) listeners to ask, for clusters whose controllers register none (repeatable)' })
    .option('timeout-ms', { type: 'number', default: CHANGE_TIMEOUT_MS_DEFAULT, describe: 'how long to wait for the change to be committed' }) as unknown as Argv<T & MembershipFlags>;
}

/** Controller listeners to try: those the brokers register, then --controller. */
async function controllerUrls(client: Client, extra: readonly string[]): Promise<string[]> {
  const cluster = await client.admin().describeCluster();
  const registered = cluster.brokers.flatMap((b) => b.endpoints.filter((e) => e.name === METADATA_ENDPOINT).map((e) => e.url));
  const urls = [...new Set([...registered, ...extra])];
  if (urls.length === 0) throw new Error('no controller listener known: give --controller ws://host:port');
  return urls;
}

/** Calls `api` on the active controller (following NOT_CONTROLLER hints) and waits for its answer. */
export async function changeControllers(client: Client, flags: MembershipFlags, api: 'addController' | 'removeController', body: Record<string, unknown>): Promise<ControllerChange> {
  const tls = tlsOptionsFrom(flags);
  const qc = new QuorumClient({
    endpoints: await controllerUrls(client, listOf(flags.controller)),
    limits: { requestTimeoutMs: flags.timeoutMs, leaderSearchTimeoutMs: Math.max(flags.requestTimeoutMs, 10_000) },
    ...(tls ? { tls: fixedDialer(tls as { ca?: string; cert?: string; key?: string }) } : {}),
  });
  try {
    return await qc.controller<ControllerChange>(api, body);
  } finally {
    qc.close();
  }
}

function render(verb: string, c: ControllerChange): string {
  return `${verb} controller ${c.nodeId}: voters ${c.voters.join(',')}${c.observers.length > 0 ? `, observers ${c.observers.join(',')}` : ''}`;
}

export const addControllerCommand: CommandModule<object, AddFlags> = {
  command: 'add-controller',
  describe: 'Add a running controller (started with --join-quorum) to the quorum\'s voters, once it caught up',
  builder: (y) => membershipFlags(y)
    .usage('$0 cluster add-controller --node-id N --controller-listen ws://host:port')
    .option('controller-listen', { type: 'string', demandOption: true, describe: 'the new controller\'s Raft listener, ws://host:port' })
    .example('$0 cluster add-controller --node-id 4 --controller-listen ws://10.0.0.4:9093', 'node 4 joins as the fourth voter') as unknown as Argv<AddFlags>,
  handler: (args: ArgumentsCamelCase<AddFlags>) => runClientCommand(args, async (client) => {
    const change = await changeControllers(client, args, 'addController', { nodeId: args.nodeId, url: args.controllerListen });
    print(args, change, () => render('added', change));
  }),
};

export const removeControllerCommand: CommandModule<object, MembershipFlags> = {
  command: 'remove-controller',
  describe: 'Remove a controller from the quorum\'s voters',
  builder: (y) => membershipFlags(y)
    .usage('$0 cluster remove-controller --node-id N')
    .example('$0 cluster remove-controller --node-id 4', 'node 4 stops being a voter; then stop its process') as unknown as Argv<MembershipFlags>,
  handler: (args: ArgumentsCamelCase<MembershipFlags>) => runClientCommand(args, async (client) => {
    const change = await changeControllers(client, args, 'removeController', { nodeId: args.nodeId });
    print(args, change, () => render('removed', change));
  }),
};
