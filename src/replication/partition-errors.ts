// One shape for a partition's error in every answer of the replica manager's
// parts: `{ errorCode, errorMessage }` from the error table (util/errors.ts).

import { Errors, SluiceError, type ErrorInfo } from '../util/errors.js';

export type PartitionError = { errorCode: number; errorMessage: string | null };

export const NONE: PartitionError = { errorCode: 0, errorMessage: null };

export function failure(error: ErrorInfo, message?: string): PartitionError {
  return { errorCode: error.code, errorMessage: message ? `${error.name}: ${message}` : error.message };
}

export function failureOf(err: unknown): PartitionError {
  if (err instanceof SluiceError) return { errorCode: err.code, errorMessage: err.message };
  return failure(Errors.UNKNOWN_SERVER_ERROR);
}
