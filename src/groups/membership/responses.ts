// Builders of JoinGroup/SyncGroup answers, shared by the state machine and
// the shell, so an error answer always carries every field a client reads.

import type { JoinGroupResponse, SyncGroupResponse } from '../../protocol/apis/groups.js';
import type { ErrorInfo } from '../../util/errors.js';

export const EMPTY_BYTES: Uint8Array = new Uint8Array(0);
/** generationId of answers that carry none (Kafka's -1). */
export const NO_GENERATION = -1;

export function errorMessage(error: ErrorInfo, message?: string): string {
  return message ? `${error.name}: ${message}` : error.message;
}

/** A JoinGroup refusal; `memberId` is echoed (for MEMBER_ID_REQUIRED: the id to rejoin with). */
export function joinError(error: ErrorInfo, memberId: string, message?: string): JoinGroupResponse {
  return {
    errorCode: error.code, errorMessage: errorMessage(error, message), generationId: NO_GENERATION, protocolType: null,
    protocolName: null, leader: '', memberId, skipAssignment: false, members: [],
  };
}

export function syncError(error: ErrorInfo, message?: string): SyncGroupResponse {
  return { errorCode: error.code, errorMessage: errorMessage(error, message), protocolType: null, protocolName: null, assignment: EMPTY_BYTES };
}
