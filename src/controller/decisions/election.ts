// Partition leader election rules (pure). The new leader is the first replica
// in assignment order that is in the ISR and alive. With no such replica the
// partition goes offline (leader NO_LEADER) unless unclean election is enabled
// for the topic; then the first live replica in assignment order leads with an
// ISR of just itself — it may lack committed records, which is why it is off
// by default and logged loudly by the caller.

import type { PartitionRegistration } from '../../metadata/image.js';
import { NO_LEADER, type BrokerId } from '../../metadata/records.js';
import { mutant } from '../../util/mutants.js';

export interface ElectionContext {
  /** True for brokers registered, unfenced and not in controlled shutdown. */
  isAcceptableLeader(broker: BrokerId): boolean;
  uncleanLeaderElectionEnabled: boolean;
}

export type ElectionKind = 'clean' | 'unclean' | 'none';

export interface ElectionResult {
  readonly leader: BrokerId;
  readonly isr: readonly BrokerId[];
  readonly kind: ElectionKind;
}

/**
 * Elects a leader from `isr` (which may already exclude departing brokers).
 * `replicas` gives the assignment order. Keeps the current leader when it is
 * still acceptable and in the ISR, unless `preferred` asks for replicas[0].
 */
export function electLeader(
  replicas: readonly BrokerId[],
  isr: readonly BrokerId[],
  currentLeader: BrokerId,
  ctx: ElectionContext,
  preferred = false,
): ElectionResult {
  // Deliberate bug (test-only switch): any live replica may lead, in the ISR or not.
  const ok = (b: BrokerId) => (isr.includes(b) || mutant('elect-outside-isr')) && ctx.isAcceptableLeader(b);
  if (preferred && replicas.length > 0 && ok(replicas[0]!)) return { leader: replicas[0]!, isr, kind: 'clean' };
  if (currentLeader !== NO_LEADER && ok(currentLeader)) return { leader: currentLeader, isr, kind: 'clean' };
  const clean = replicas.find(ok);
  if (clean !== undefined) return { leader: clean, isr, kind: 'clean' };
  if (ctx.uncleanLeaderElectionEnabled) {
    const unclean = replicas.find((b) => ctx.isAcceptableLeader(b));
    if (unclean !== undefined) return { leader: unclean, isr: [unclean], kind: 'unclean' };
  }
  return { leader: NO_LEADER, isr, kind: 'none' };
}

/** True when the preferred replica leads (or cannot: then there is nothing to do). */
export function hasPreferredLeader(reg: PartitionRegistration): boolean {
  return reg.replicas.length === 0 || reg.leader === reg.replicas[0];
}
