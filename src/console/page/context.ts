// What every view of the console shares: the client library (loaded from the
// browser bundle), one Client and its Admin, the node's console config, the
// latest snapshot of the cluster and the samples behind the live charts.
// Views only read the context; app.ts owns it and refreshes it.

// The client's types come from its built declarations (dist/src/client/):
// the page is its own TypeScript project (tsconfig.console.json, with the DOM
// library), compiled after the main one, so the DOM's types never reach the
// Node code and the client's sources are not re-checked under them.
import type * as SluiceModule from '../../../dist/src/client/index.js';
import type { Admin, Client, OngoingReassignment } from '../../../dist/src/client/index.js';

export type { Admin, Client, OngoingReassignment };
export type { Producer } from '../../../dist/src/client/index.js';
import type { ClusterView, GroupRow, Sample, TopicRow } from './model.js';

export type Sluice = typeof SluiceModule;

/** /console/config.json (src/console/http.ts). */
export interface ConsoleConfig {
  readonly nodeId: number;
  readonly bootstrap: readonly string[];
  readonly admin: boolean;
  /** Mechanisms a login form may offer (user name and password), and whether a login is required; null: none. */
  readonly sasl: { readonly mechanisms: readonly string[]; readonly required: boolean } | null;
}

/** One poll of the cluster; a part that failed is null and its error is listed. */
export interface Snapshot {
  readonly atMs: number;
  readonly cluster: ClusterView | null;
  readonly topics: readonly TopicRow[] | null;
  readonly groups: readonly GroupRow[] | null;
  readonly reassignments: readonly OngoingReassignment[] | null;
  readonly errors: readonly string[];
}

export interface Ctx {
  readonly sluice: Sluice;
  readonly client: Client;
  readonly admin: Admin;
  readonly config: ConsoleConfig;
  readonly samples: readonly Sample[];
  readonly snapshot: Snapshot | null;
  /** Polls now (after an admin action) instead of at the next tick. */
  refresh(): Promise<void>;
}

/** A view: built once when its route opens, updated on every snapshot, closed when the route changes. */
export interface View {
  readonly root: HTMLElement;
  update(s: Snapshot): void;
  close(): void;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
