// Invariant checks. A failed assertion is a programmer bug, not an operating
// error: it throws AssertionError so the process stops instead of corrupting
// data. Operating errors (bad input, lost peers, full disks) are SluiceError
// values with stable codes (see errors.ts) and are always handled.

export class AssertionError extends Error {
  override name = 'AssertionError';
}

export function assert(condition: unknown, message = 'assertion failed'): asserts condition {
  if (!condition) throw new AssertionError(message);
}

/** Exhaustiveness check for discriminated unions: `default: return unreachable(x)`. */
export function unreachable(value: never, what = 'value'): never {
  throw new AssertionError(`unreachable: unexpected ${what} ${JSON.stringify(value)}`);
}
