import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (what .ci/run installs), or the browser VIGIL_CHROMIUM names. */
export const CHROMIUM = process.env.VIGIL_CHROMIUM ?? '/usr/bin/chromium';

/** Headless, and without the background traffic (updates, sync, QUIC) that a test would see as noise. */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Whether the browser is there: without it `suite` skips with a message, except under CI=true,
 * where its absence fails the run.
 */
export function chromiumPresent(suite: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing: the ${suite} needs it under CI=true`);
  console.warn(`${suite} skipped: ${CHROMIUM} is missing (install Debian's chromium or set VIGIL_CHROMIUM)`);
  return false;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
}
