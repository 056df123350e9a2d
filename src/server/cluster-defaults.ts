// Cluster-wide configs a node's config file offers (num.partitions,
// default.replication.factor, min.insync.replicas, ...). They live in the
// metadata log, so a node does not own them: once the active controller
// answers, it writes each offered key the cluster has no value of its own for
// (source 'default'), and leaves keys someone already set alone — the first
// node to start with a file seeds the cluster, `sluice configs alter
// --cluster` changes it later. Retried in the background until it succeeds,
// the node stops, or `deadlineMs` passes (then logged, not fatal) — on the
// node's injected clock and scheduler.

import type { Clock, Scheduler } from '../util/clock.js';
import type { Logger } from '../util/logger.js';

export type ControllerCall = <T>(api: string, body: Record<string, unknown>) => Promise<T>;

interface DescribedConfig { name: string; source: string }

export function offerClusterDefaults(
  defaults: Readonly<Record<string, string>>,
  call: ControllerCall,
  logger: Logger,
  time: { readonly clock: Clock; readonly scheduler: Scheduler },
  opts: { deadlineMs?: number; retryMs?: number; stopped?: () => boolean } = {},
): Promise<void> {
  const keys = Object.keys(defaults);
  if (keys.length === 0) return Promise.resolve();
  const deadline = time.clock.monotonicMs() + (opts.deadlineMs ?? 120_000);
  const attempt = async (): Promise<void> => {
    const described = await call<{ errorCode: number; configs?: DescribedConfig[] }>('describeConfigs', { resourceType: 'cluster', resourceName: '' });
    const unset = keys.filter((k) => described.configs?.find((c) => c.name === k)?.source === 'default');
    if (unset.length === 0) return;
    const set = Object.fromEntries(unset.map((k) => [k, defaults[k]!]));
    const res = await call<{ resources: Array<{ errorCode: number; errorMessage: string | null }> }>('alterConfigs', { resources: [{ resourceType: 'cluster', resourceName: '', set }] });
    const failed = res.resources.find((r) => r.errorCode !== 0);
    if (failed) throw new Error(failed.errorMessage ?? `error ${failed.errorCode}`);
    logger.info({ set }, 'cluster configs seeded from this node\'s config file');
  };
  return (async () => {
    for (;;) {
      if (opts.stopped?.()) return;
      try {
        await attempt();
        return;
      } catch (err) {
        if (time.clock.monotonicMs() > deadline) {
          logger.warn({ err: (err as Error).message, keys }, 'could not offer the config file\'s cluster configs');
          return;
        }
        await new Promise((resolve) => time.scheduler.schedule(opts.retryMs ?? 500, () => resolve(undefined)));
      }
    }
  })();
}
