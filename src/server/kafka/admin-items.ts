// Small helpers the admin handlers share: per-item error fields in Kafka's
// shape, and the duplicate check Kafka's broker applies to requests that name
// one topic or resource twice (INVALID_REQUEST on each copy).

import { Errors, SluiceError, type ErrorInfo } from '../../util/errors.js';

export interface KafkaItemError {
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

export const NO_ERROR: KafkaItemError = { errorCode: 0, errorMessage: null };

export function itemError(info: ErrorInfo, message: string): KafkaItemError {
  return { errorCode: info.code, errorMessage: `${info.name}: ${message}` };
}

/** A failed controller call as an item's error (the whole request fails only when every item did). */
export function errorOf(err: unknown): KafkaItemError {
  if (err instanceof SluiceError) return { errorCode: err.code, errorMessage: err.message };
  return { errorCode: Errors.UNKNOWN_SERVER_ERROR.code, errorMessage: err instanceof Error ? err.message : 'unknown error' };
}

/** The keys that occur more than once in `keys`. */
export function duplicated(keys: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const k of keys) (seen.has(k) ? twice : seen).add(k);
  return twice;
}

export const duplicateError = (what: string): KafkaItemError => itemError(Errors.INVALID_REQUEST, `${what} is named more than once in the request`);

/** Groups (topic, partition) results by topic, keeping the order topics first appear in. */
export function byTopic<T>(items: readonly T[], topicOf: (item: T) => string): Array<[string, T[]]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const t = topicOf(item);
    let list = out.get(t);
    if (!list) out.set(t, list = []);
    list.push(item);
  }
  return [...out];
}
