// Headless Chromium for the browser tests: Debian's package
// (/usr/bin/chromium, installed by scripts/interop-tools.sh), driven by
// playwright-core, which never downloads a browser of its own. Where the
// binary is missing the tests skip with the reason this returns.
//
// The flags are the ones this workplace's machines need: no sandbox (tests
// run as root), and no background networking, component updates or sync,
// whose connections a closed network refuses many at a time.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';

const FLAGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-dev-shm-usage',
];

/** Why the browser tests cannot run here, or null when they can. */
export function chromiumSkipReason(): string | null {
  if (!existsSync(CHROMIUM_PATH)) return `skipping: ${CHROMIUM_PATH} not found (Debian's chromium package; scripts/interop-tools.sh installs it)`;
  return null;
}

export interface Chromium {
  readonly browser: Browser | null;
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** A headless Chromium with a fresh profile directory, removed on close(). */
export async function launchChromium(): Promise<Chromium> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'sluice-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: FLAGS,
  });
  return {
    browser: context.browser(),
    context,
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
