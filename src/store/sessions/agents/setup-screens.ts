import { harnessNames, adapterOf } from './index.js';

export type { SetupScreen } from './adapter.js';

/**
 * The first-run screens each agent shows before it takes a prompt (and before its first hook fires),
 * as its adapter names them (`firstRunScreens`, beside its other screens). Read from the pane while a
 * session is `starting`: a match is `awaiting{setup}` with the dialog named in `detail`.
 */
const screensOf = (harness: string) => (harnessNames().includes(harness) ? (adapterOf(harness).firstRunScreens ?? []) : []);

/** The setup dialog on `screen` (a pane's text) for an agent of `harness`, or null. */
export function setupDialog(harness: string, screen: string): string | null {
  return screensOf(harness).find((s) => s.match.every((re) => re.test(screen)))?.detail ?? null;
}

/** Whether a harness has setup screens to watch for (an agent with a first run). */
export const hasSetupScreens = (harness: string): boolean => screensOf(harness).length > 0;
