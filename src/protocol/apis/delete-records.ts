// DeleteRecords (api key 21): moves partitions' log start offsets up, as
// Kafka's DeleteRecords does. Records below the new start can no longer be
// read (OFFSET_OUT_OF_RANGE); segments wholly below it are deleted; followers
// follow through the logStartOffset of their fetch answers.
//
//   request  { topics: [{ name, partitions: [{ partition, offset }] }] }
//            offset -1 means the high watermark; it may not pass the high watermark.
//   response { topics: [{ name, partitions: [{ partition, errorCode, errorMessage, lowWatermark }] }] }
//            lowWatermark: the leader's log start offset after the move (-1 on error).

import { int, list, str, type Body } from '../body.js';

/** The offset that means "up to the high watermark". */
export const DELETE_TO_HIGH_WATERMARK = -1;

export interface DeleteRecordsPartition { readonly partition: number; readonly offset: number }
export interface DeleteRecordsRequest {
  readonly topics: ReadonlyArray<{ readonly name: string; readonly partitions: readonly DeleteRecordsPartition[] }>;
}
export interface DeleteRecordsPartitionResponse {
  partition: number; errorCode: number; errorMessage: string | null; lowWatermark: number;
}
export interface DeleteRecordsResponse {
  readonly topics: Array<{ name: string; partitions: DeleteRecordsPartitionResponse[] }>;
}

export function parseDeleteRecordsRequest(b: Body): DeleteRecordsRequest {
  return {
    topics: list(b, 'topics').map((t) => ({
      name: str(t, 'name'),
      partitions: list(t, 'partitions').map((p) => ({ partition: int(p, 'partition'), offset: int(p, 'offset') })),
    })),
  };
}
