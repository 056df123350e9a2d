// The metadata state machine: what the Raft driver applies committed entries
// to on every node (active controller, standby controllers, broker
// observers). Each Normal entry holds the records of one controller command,
// replayed atomically into the next MetadataImage, which is then published to
// subscribers with what changed. Snapshots are the image's records.
//
// Invariant: `image.offset` is the index of the last entry that carried
// records; nodes that applied the same index hold equal images (checked by
// the simulation through `image.toRecords()`).

import { EntryType, type Entry, type Snapshot } from '../raft/types.js';
import type { StateMachine } from '../raft-node/state-machine.js';
import { assert } from '../util/assert.js';
import { Packr } from 'msgpackr';
import { decodeMetadataRecords, validateMetadataRecords } from './codec.js';
import { imageFromRecords, MetadataDelta, type MetadataChanges } from './delta.js';
import { MetadataImage } from './image.js';
import type { MetadataRecord } from './records.js';
import { Errors, SluiceError } from '../util/errors.js';

export type ImageListener = (image: MetadataImage, changes: MetadataChanges | null) => void;

const snapshotPackr = new Packr({ useRecords: false, moreTypes: false });

export class MetadataStateMachine implements StateMachine {
  private current: MetadataImage = MetadataImage.EMPTY;
  private applied = 0;
  private readonly listeners = new Set<ImageListener>();

  get appliedIndex(): number {
    return this.applied;
  }

  get image(): MetadataImage {
    return this.current;
  }

  /** Subscribes to new images; `changes` is null after a snapshot restore (everything may have changed). */
  subscribe(listener: ImageListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  apply(entry: Entry): void {
    assert(entry.index === this.applied + 1, `metadata apply out of order: ${entry.index} after ${this.applied}`);
    if (entry.type !== EntryType.Normal || entry.data.length === 0) {
      this.applied = entry.index;
      return;
    }
    // A committed entry that does not decode means the log is corrupt or was
    // written by a newer version: throw (the driver stops) rather than skip it.
    const records = decodeMetadataRecords(entry.data);
    const delta = new MetadataDelta(this.current);
    delta.replayBatch(records, entry.index);
    this.applied = entry.index;
    this.publish(delta.apply(), delta.changes());
  }

  snapshot(): Uint8Array {
    return snapshotPackr.pack({ offset: this.current.offset, records: this.current.toRecords() });
  }

  restore(snapshot: Snapshot): void {
    const { offset, records } = decodeSnapshot(snapshot.data);
    this.applied = snapshot.meta.index;
    this.publish(records.length === 0 && offset < 0 ? MetadataImage.EMPTY : imageFromRecords(records, offset), null);
  }

  describe(): Record<string, unknown> {
    return {
      appliedIndex: this.applied,
      imageOffset: this.current.offset,
      brokers: this.current.brokers.size,
      topics: this.current.topicsByName.size,
    };
  }

  private publish(image: MetadataImage, changes: MetadataChanges | null): void {
    this.current = image;
    for (const listener of this.listeners) listener(image, changes);
  }
}

/** Encodes one controller command's records as the data of a Raft entry. */
export { encodeMetadataRecords as encodeMetadataEntry } from './codec.js';

function decodeSnapshot(data: Uint8Array): { offset: number; records: MetadataRecord[] } {
  let value: unknown;
  try {
    value = snapshotPackr.unpack(data);
  } catch (err) {
    throw new SluiceError(Errors.CORRUPT_MESSAGE, `metadata snapshot does not decode: ${(err as Error).message}`);
  }
  const v = value as { offset?: unknown; records?: unknown };
  if (typeof v !== 'object' || v === null || !Number.isSafeInteger(v.offset) || !Array.isArray(v.records)) {
    throw new SluiceError(Errors.CORRUPT_MESSAGE, 'metadata snapshot has the wrong shape');
  }
  return { offset: v.offset as number, records: validateMetadataRecords(v.records) };
}
