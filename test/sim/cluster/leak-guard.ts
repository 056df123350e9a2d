// Finds the real world leaking into the simulation: while installed, every
// call of setTimeout / setInterval / setImmediate / Date.now /
// performance.now / Math.random made from src/ is counted by call site. Any
// such call makes runs of one seed differ (and a simulated timeout never
// fire), so the cluster's determinism test prints this list when digests
// differ. The kernel's own setImmediate (the microtask drain) is not counted.

type Counts = Map<string, number>;

const NAMES = ['setTimeout', 'setInterval', 'setImmediate'] as const;

function callSite(): string | undefined {
  const stack = new Error().stack?.split('\n') ?? [];
  // [0] "Error", [1] callSite, [2] the wrapper, [3] the caller.
  for (let i = 3; i < stack.length; i++) {
    const line = stack[i]!;
    if (line.includes('/test/sim/cluster/kernel.')) return undefined;
    if (line.includes('/src/util/clock.')) continue; // SystemClock / SystemScheduler: who called them is the leak
    const m = /\/(src\/[^:)]+):(\d+)/.exec(line);
    if (m) return `${m[1]}:${m[2]}`;
  }
  return undefined;
}

/** Installs the guard; the returned function uninstalls it and gives the counts, most frequent first. */
export function installLeakGuard(): () => Array<[string, number]> {
  const counts: Counts = new Map();
  const note = (what: string): void => {
    const site = callSite();
    if (site) counts.set(`${what} ${site}`, (counts.get(`${what} ${site}`) ?? 0) + 1);
  };
  const g = globalThis as unknown as Record<string, (...args: unknown[]) => unknown>;
  const saved = new Map<string, (...args: unknown[]) => unknown>();
  for (const name of NAMES) {
    const orig = g[name]!;
    saved.set(name, orig);
    g[name] = function (this: unknown, ...args: unknown[]) {
      note(name);
      return orig.apply(this, args);
    };
  }
  const dateNow = Date.now;
  Date.now = () => { note('Date.now'); return dateNow(); };
  const perfNow = performance.now.bind(performance);
  performance.now = () => { note('performance.now'); return perfNow(); };
  const random = Math.random;
  Math.random = () => { note('Math.random'); return random(); };
  return () => {
    for (const [name, fn] of saved) g[name] = fn;
    Date.now = dateNow;
    performance.now = perfNow;
    Math.random = random;
    return [...counts.entries()].sort((a, b) => b[1] - a[1]);
  };
}
