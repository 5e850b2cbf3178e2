import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from './config.js';

const withConfig = (sessions: unknown): string => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-budget-'));
  writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ sessions }));
  return dir;
};

describe('sessions.budgetUsd and sessions.budgetUsdPerDay (issue 42)', () => {
  it('are dollars above 0, or absent (no limit)', () => {
    expect(loadSettings(withConfig({})).sessions).toMatchObject({ budgetUsd: null, budgetUsdPerDay: null });
    expect(loadSettings(withConfig({ budgetUsd: 0.05, budgetUsdPerDay: 20 })).sessions).toMatchObject({ budgetUsd: 0.05, budgetUsdPerDay: 20 });
  });

  it.each([['budgetUsd', '5$'], ['budgetUsd', 0], ['budgetUsdPerDay', -1], ['budgetUsdPerDay', true]])('%s %j is refused with its repair', (key, value) => {
    expect(() => loadSettings(withConfig({ [key]: value }))).toThrow(`"sessions.${key}" must be a number of US dollars above 0, not ${JSON.stringify(value)}; repair: write it as a plain number`);
  });
});
