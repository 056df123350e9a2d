// What the group handlers of the Kafka listener share: the coordinator (the
// same GroupCoordinator the WebSocket protocol's group APIs use, so groups
// and offsets are one set whichever protocol a member speaks) and Kafka's
// "this broker runs none" answer.

import { Errors, SluiceError } from '../../util/errors.js';
import type { GroupOps as GroupCoordinator } from '../../groups/coordinator.js';
import type { KafkaDeps } from './api.js';

export function coordinatorOf(deps: KafkaDeps): GroupCoordinator {
  if (!deps.groups) throw new SluiceError(Errors.COORDINATOR_NOT_AVAILABLE, 'this broker runs no group coordinator');
  return deps.groups;
}
