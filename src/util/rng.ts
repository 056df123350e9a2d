// Seeded pseudo-random numbers. There is no global RNG in Sluice: every
// component that needs randomness takes an Rng, so a simulation is replayable
// from its seed. The generator is xoshiro128** (Blackman & Vigna), seeded by
// splitmix32; it is fast, has a 2^128-1 period and good statistical quality —
// more than enough for timeouts, jitter and test schedules (not for crypto).

export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). n must be a positive integer ≤ 2^32. */
  int(n: number): number;
  /** Uniform integer in [lo, hi] inclusive. */
  range(lo: number, hi: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  /** An independent generator derived from this one (for sub-components). */
  fork(): Rng;
}

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export class SeededRng implements Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    const sm = splitmix32(seed);
    this.a = sm();
    this.b = sm();
    this.c = sm();
    this.d = sm();
    if ((this.a | this.b | this.c | this.d) === 0) this.d = 1;
  }

  /** Next raw 32-bit unsigned value. */
  u32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  next(): number {
    return this.u32() / 4294967296;
  }

  int(n: number): number {
    if (!(Number.isInteger(n) && n > 0 && n <= 4294967296)) throw new RangeError(`int(n): bad n ${n}`);
    return Math.floor(this.next() * n);
  }

  range(lo: number, hi: number): number {
    if (hi < lo) throw new RangeError(`range(${lo}, ${hi}): empty`);
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  fork(): Rng {
    return new SeededRng(this.u32());
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/**
 * A seed from the runtime's entropy (Web Crypto's getRandomValues: Node 20,
 * browsers, workers) for the one place a process or a client picks its seed;
 * everything after that forks from the seeded Rng, so a run can be replayed
 * from the logged seed.
 */
export function entropySeed(): number {
  const words = (globalThis as unknown as { crypto: { getRandomValues(a: Uint32Array): Uint32Array } }).crypto.getRandomValues(new Uint32Array(1));
  return words[0]!;
}
