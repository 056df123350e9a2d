// Finding a group's coordinator and calling it: FindCoordinator through any
// broker, then the coordinator's connection until it says it is no longer
// the coordinator (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE) or its
// connection fails — then it is looked up again. Used by the consumer's
// group membership and offsets, by the group admin, and (keyType 1) by the
// transactional producer for its transaction coordinator.
//
// Every group call goes through `call()`, which retries retriable errors with
// the Client's backoff (COORDINATOR_LOAD_IN_PROGRESS while a new coordinator
// reads the offsets log, a coordinator moving, a lost connection). Errors
// that need the caller's decision (REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID,
// ILLEGAL_GENERATION, MEMBER_ID_REQUIRED, ...) are not retriable and come
// back as typed SluiceErrors; a top-level errorCode in an answer is turned
// into one here, whichever way the connection reported it.

import { Errors, isSluiceError, SluiceError } from '../util/errors.js';
import type { BrokerConnection } from './broker-connection.js';
import type { Client } from './client.js';
import { errorFromCode } from './responses.js';

/** Errors after which the coordinator must be looked up again. */
const COORDINATOR_MOVED: ReadonlySet<number> = new Set([
  Errors.NOT_COORDINATOR.code, Errors.COORDINATOR_NOT_AVAILABLE.code, Errors.NETWORK_EXCEPTION.code, Errors.REQUEST_TIMED_OUT.code,
]);

export class CoordinatorLink {
  private coordinator: Promise<{ nodeId: number; conn: BrokerConnection }> | null = null;

  /** keyType 1: `groupId` is a transactional id, and this links to its transaction coordinator. */
  constructor(private readonly client: Client, readonly groupId: string, private readonly keyType: 0 | 1 = 0) {}

  /** The coordinator's connection (looked up once, then cached). */
  async connection(): Promise<BrokerConnection> {
    if (!this.coordinator) {
      const lookup = this.lookup();
      this.coordinator = lookup;
      lookup.catch(() => {
        if (this.coordinator === lookup) this.coordinator = null;
      });
    }
    const c = await this.coordinator;
    if (!c.conn.isOpen) {
      this.invalidate();
      throw new SluiceError(Errors.NETWORK_EXCEPTION, `connection to the coordinator of ${this.groupId} is closed`);
    }
    return c.conn;
  }

  /** The coordinator's broker id, if known. */
  async nodeId(): Promise<number> {
    await this.connection();
    return (await this.coordinator!).nodeId;
  }

  invalidate(): void {
    this.coordinator = null;
  }

  /**
   * Runs `fn` against the coordinator, retrying retriable errors (looking the
   * coordinator up again when it moved). `retries` overrides the Client's.
   */
  call<T>(what: string, fn: (conn: BrokerConnection) => Promise<T>, retries?: number): Promise<T> {
    return this.client.retry(what, async () => {
      try {
        return await fn(await this.connection());
      } catch (err) {
        this.noteError(err);
        throw err;
      }
    }, retries === undefined ? {} : { retries });
  }

  /** Forgets the coordinator after an error that says it moved. */
  noteError(err: unknown): void {
    if (isSluiceError(err) && COORDINATOR_MOVED.has(err.code)) this.invalidate();
  }

  private async lookup(): Promise<{ nodeId: number; conn: BrokerConnection }> {
    const any = await this.client.anyConnection();
    const found = checked('FindCoordinator', await any.findCoordinator(this.groupId, this.keyType));
    const what = this.keyType === 0 ? 'group' : 'transactional id';
    if (found.url === null || found.nodeId < 0) throw new SluiceError(Errors.COORDINATOR_NOT_AVAILABLE, `no coordinator for ${what} ${this.groupId} yet`);
    return { nodeId: found.nodeId, conn: await this.client.connectionTo(found.url) };
  }
}

/**
 * Throws the error an answer carries in its top-level errorCode (the other
 * fields, e.g. MEMBER_ID_REQUIRED's memberId, go into the error's details).
 */
export function checked<T extends { errorCode: number; errorMessage?: string | null }>(api: string, res: T): T {
  if (res.errorCode === Errors.NONE.code) return res;
  const { errorCode, errorMessage, ...rest } = res;
  throw errorFromCode(errorCode, errorMessage ?? null, { ...rest, api });
}

// ---------------------------------------------------------------- offsets

/** Who commits: a group member's generation, or -1/'' for a consumer outside the group's membership (assign()). */
export interface CommitContext {
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
}

export const NO_MEMBERSHIP: CommitContext = { generationId: -1, memberId: '', groupInstanceId: null };

export interface OffsetToCommit {
  readonly topic: string;
  readonly partition: number;
  /** The next offset to consume (Kafka's meaning of a committed offset). */
  readonly offset: number;
  readonly metadata?: string | null;
}

export interface CommittedOffset {
  readonly topic: string;
  readonly partition: number;
  /** -1 when nothing is committed. */
  readonly offset: number;
  readonly metadata: string | null;
}

/**
 * OffsetCommit; resolves once the coordinator has written every offset (it
 * answers after replicating to the ISR). A partition error fails the whole
 * call: retriable ones are retried, others thrown (ILLEGAL_GENERATION,
 * UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS: the caller decides).
 */
export async function commitGroupOffsets(coord: CoordinatorLink, ctx: CommitContext, offsets: readonly OffsetToCommit[]): Promise<void> {
  if (offsets.length === 0) return;
  const byTopic = new Map<string, OffsetToCommit[]>();
  for (const o of offsets) byTopic.set(o.topic, [...(byTopic.get(o.topic) ?? []), o]);
  await coord.call('OffsetCommit', async (conn) => {
    const res = await conn.offsetCommit({
      groupId: coord.groupId, generationId: ctx.generationId, memberId: ctx.memberId, groupInstanceId: ctx.groupInstanceId,
      topics: [...byTopic].map(([name, os]) => ({
        name, partitions: os.map((o) => ({ partition: o.partition, committedOffset: o.offset, committedLeaderEpoch: -1, metadata: o.metadata ?? null })),
      })),
    });
    for (const t of res.topics) {
      for (const p of t.partitions) {
        if (p.errorCode !== Errors.NONE.code) throw errorFromCode(p.errorCode, p.errorMessage, { api: 'OffsetCommit', topic: t.name, partition: p.partition });
      }
    }
  });
}

/**
 * OffsetFetch for these partitions (null: every partition the group has an
 * offset for). `requireStable` (read_committed consumers, KIP-447): a
 * partition whose offset a transaction is still committing is retried
 * (UNSTABLE_OFFSET_COMMIT) rather than read at its older offset.
 */
export async function fetchGroupOffsets(
  coord: CoordinatorLink, topics: ReadonlyArray<{ readonly topic: string; readonly partitions: readonly number[] }> | null, requireStable = false,
): Promise<CommittedOffset[]> {
  return coord.call('OffsetFetch', async (conn) => {
    const res = checked('OffsetFetch', await conn.offsetFetch({
      groupId: coord.groupId, topics: topics === null ? null : topics.map((t) => ({ name: t.topic, partitions: [...t.partitions] })), requireStable,
    }));
    const out: CommittedOffset[] = [];
    for (const t of res.topics) {
      for (const p of t.partitions) {
        if (p.errorCode !== Errors.NONE.code) throw errorFromCode(p.errorCode, p.errorMessage, { api: 'OffsetFetch', topic: t.name, partition: p.partition });
        out.push({ topic: t.name, partition: p.partition, offset: p.committedOffset, metadata: p.metadata });
      }
    }
    return out;
  });
}
