// The records of __transaction_state: one key per transactional id, so the
// last value in the (compacted) log is the id's state and a tombstone (null
// value) forgets it.
//
//   key    [0, transactionalId]
//   value  { v: 1, producerId, producerEpoch, lastProducerId, lastProducerEpoch, timeoutMs, state,
//            partitions: [[topic, partition], ...], markerProducerId, markerEpoch,
//            startTimeMs, updateTimeMs, coordinatorAborted }
//
// msgpack, like the group coordinator's records (Kafka's TransactionLog is the
// model; its binary schema is not copied). -1 stands for "none" in the
// lastProducer and marker fields. Decoding checks every field and the state
// machine's invariants: a record it cannot read throws CORRUPT_MESSAGE and the
// loader skips it.

import { Packr } from 'msgpackr';
import { Errors, SluiceError } from '../util/errors.js';
import { TRANSACTION_STATE_NAMES } from '../protocol/apis/transactions.js';
import { isOpen, normalizePartitions, PRODUCER_EPOCH_MAX, type TxnMetadata, type TxnPartition, type TxnState } from './state-machine.js';

const TXN_KEY = 0;
const VALUE_VERSION = 1;

const packr = new Packr({ useRecords: false, moreTypes: false, variableMapSize: true, encodeUndefinedAsNil: true });

export function txnKey(transactionalId: string): Buffer {
  return packr.pack([TXN_KEY, transactionalId]);
}

export function txnValue(m: TxnMetadata): Buffer {
  return packr.pack({
    v: VALUE_VERSION, producerId: m.producerId, producerEpoch: m.producerEpoch,
    lastProducerId: m.lastProducer?.producerId ?? -1, lastProducerEpoch: m.lastProducer?.producerEpoch ?? -1,
    timeoutMs: m.timeoutMs, state: m.state, partitions: m.partitions.map((p) => [p.topic, p.partition]),
    markerProducerId: m.markers?.producerId ?? -1, markerEpoch: m.markers?.producerEpoch ?? -1,
    startTimeMs: m.startTimeMs, updateTimeMs: m.updateTimeMs, coordinatorAborted: m.coordinatorAborted,
  });
}

type Obj = Record<string, unknown>;

function corrupt(what: string): SluiceError {
  return new SluiceError(Errors.CORRUPT_MESSAGE, `__transaction_state record: ${what}`);
}

function unpack(bytes: Uint8Array): unknown {
  try {
    return packr.unpack(bytes);
  } catch (err) {
    throw corrupt(`not msgpack (${(err as Error).message})`);
  }
}

function int(o: Obj, k: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = o[k];
  if (!Number.isSafeInteger(v) || (v as number) < min || (v as number) > max) throw corrupt(`${k} is not an integer in [${min}, ${max}]`);
  return v as number;
}

/** The transactional id of a key, or null for a key kind this version does not know (skipped). */
export function decodeTxnKey(bytes: Uint8Array): string | null {
  const v = unpack(bytes);
  if (!Array.isArray(v) || !Number.isSafeInteger(v[0])) throw corrupt('key is not [kind, ...]');
  if (v[0] !== TXN_KEY) return null;
  if (v.length !== 2 || typeof v[1] !== 'string' || v[1].length === 0) throw corrupt('key is not [0, transactionalId]');
  return v[1];
}

function partitionsOf(v: unknown): TxnPartition[] {
  if (!Array.isArray(v)) throw corrupt('partitions is not a list');
  return v.map((p: unknown) => {
    if (!Array.isArray(p) || p.length !== 2 || typeof p[0] !== 'string' || !Number.isSafeInteger(p[1]) || (p[1] as number) < 0) throw corrupt('a partition is not [topic, index]');
    return { topic: p[0] as string, partition: p[1] as number };
  });
}

function pair(o: Obj, idKey: string, epochKey: string): { producerId: number; producerEpoch: number } | null {
  const producerId = int(o, idKey, -1);
  const producerEpoch = int(o, epochKey, -1, PRODUCER_EPOCH_MAX);
  if ((producerId < 0) !== (producerEpoch < 0)) throw corrupt(`${idKey} and ${epochKey} must both be -1 or neither`);
  return producerId < 0 ? null : { producerId, producerEpoch };
}

export function decodeTxnValue(transactionalId: string, bytes: Uint8Array): TxnMetadata {
  const raw = unpack(bytes);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || raw instanceof Uint8Array) throw corrupt('value is not a map');
  const o = raw as Obj;
  if (o.v !== VALUE_VERSION) throw corrupt(`value version ${String(o.v)}`);
  const state = o.state;
  if (typeof state !== 'string' || !(TRANSACTION_STATE_NAMES as readonly string[]).includes(state) || state === 'PrepareEpochFence') throw corrupt(`state ${String(state)}`);
  if (typeof o.coordinatorAborted !== 'boolean') throw corrupt('coordinatorAborted is not a boolean');
  const m: TxnMetadata = {
    transactionalId, producerId: int(o, 'producerId', 0), producerEpoch: int(o, 'producerEpoch', 0, PRODUCER_EPOCH_MAX),
    lastProducer: pair(o, 'lastProducerId', 'lastProducerEpoch'), timeoutMs: int(o, 'timeoutMs', 1), state: state as TxnState,
    partitions: partitionsOf(o.partitions), markers: pair(o, 'markerProducerId', 'markerEpoch'),
    startTimeMs: int(o, 'startTimeMs', -1), updateTimeMs: int(o, 'updateTimeMs', 0), coordinatorAborted: o.coordinatorAborted,
  };
  // The state machine's invariants (state-machine.ts header): what the shell relies on after a load.
  const prepared = m.state === 'PrepareCommit' || m.state === 'PrepareAbort';
  const ended = prepared || m.state === 'CompleteCommit' || m.state === 'CompleteAbort';
  const sorted = normalizePartitions(m.partitions);
  if (sorted.length !== m.partitions.length || sorted.some((p, i) => p.topic !== m.partitions[i]!.topic || p.partition !== m.partitions[i]!.partition)) throw corrupt('partitions are not sorted and unique');
  if (!isOpen(m.state) && m.partitions.length > 0) throw corrupt(`a ${m.state} transaction has partitions`);
  if (ended !== (m.markers !== null)) throw corrupt(`a ${m.state} transaction ${ended ? 'needs' : 'has'} marker producer fields`);
  if (isOpen(m.state) !== (m.startTimeMs >= 0)) throw corrupt(`a ${m.state} transaction has start time ${m.startTimeMs}`);
  return m;
}
