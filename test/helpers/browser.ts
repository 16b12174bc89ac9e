import assert from 'node:assert/strict';
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { startStack, type TestStack, type TestStackOptions } from '../../dev/stack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

/**
 * Why the UI tests cannot run on this machine, or false when they can. Without Chromium they are skipped,
 * except in CI (CI=true), where they must run: there a missing Chromium fails them in launchChromium.
 */
export function uiTestsSkipped(): string | false {
  if (fs.existsSync(CHROMIUM) || process.env.CI === 'true') return false;
  return `no Chromium at ${CHROMIUM}: install Debian's chromium or set CHROMIUM_PATH (CI=true makes this a failure)`;
}

/** Debian's Chromium (CHROMIUM_PATH overrides), headless, for checks of the Temporal Web UI. */
export function launchChromium(): Promise<Browser> {
  assert.ok(
    fs.existsSync(CHROMIUM),
    `Chromium is needed at ${CHROMIUM} (Debian package chromium, or set CHROMIUM_PATH)`,
  );
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
}

/** What a UI test drives: Chromium and a stack (dev server with its Web UI, simulator, worker). */
export interface UiStack {
  browser: Browser;
  stack: TestStack;
  /** Stops the stack, then closes Chromium even if stopping failed. */
  stop(): Promise<void>;
}

/**
 * Launches Chromium first, so a missing browser fails before any server starts; if the stack then fails to
 * start, startStack has stopped what it started and Chromium is closed here. Nothing outlives a failed start.
 */
export async function startUiStack(options: TestStackOptions): Promise<UiStack> {
  const browser = await launchChromium();
  let stack: TestStack;
  try {
    stack = await startStack(options);
  } catch (error) {
    await browser.close();
    throw error;
  }
  return {
    browser,
    stack,
    async stop() {
      try {
        await stack.stop();
      } finally {
        await browser.close();
      }
    },
  };
}
