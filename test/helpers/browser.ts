import assert from 'node:assert/strict';
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

/** Debian's Chromium, headless, for checks of the Temporal Web UI. */
export function launchChromium(): Promise<Browser> {
  assert.ok(fs.existsSync(CHROMIUM), `Chromium is needed at ${CHROMIUM} (Debian package chromium)`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
}
