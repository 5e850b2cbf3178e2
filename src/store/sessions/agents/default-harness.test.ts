import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { harnessMenu, resolveHarness } from './default-harness.js';

const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
/** A PATH folder holding executable stand-ins named `programs`. */
function bin(...programs: string[]): string {
  const d = mkdtempSync(join(tmpdir(), 'trellis-harness-'));
  made.push(d);
  for (const p of programs) {
    writeFileSync(join(d, p), '#!/bin/sh\nexit 0\n');
    chmodSync(join(d, p), 0o755);
  }
  return d;
}

describe('the project default harness: "auto" is the first installed agent, else shell', () => {
  it('auto resolves against the PATH sessions run with: claude before codex before opencode; none is shell', () => {
    expect(resolveHarness('auto', { PATH: bin() })).toBe('shell');
    expect(resolveHarness('auto', { PATH: bin('opencode') })).toBe('opencode');
    expect(resolveHarness('auto', { PATH: bin('opencode', 'codex') })).toBe('codex');
    expect(resolveHarness('auto', { PATH: `${bin('codex')}:${bin('claude')}` })).toBe('claude');
    // A file that is not executable is not an installed agent.
    const d = bin('codex');
    chmodSync(join(d, 'codex'), 0o644);
    expect(resolveHarness('auto', { PATH: d })).toBe('shell');
  });

  it('a named harness stays itself (installed or not); none named is shell', () => {
    expect(resolveHarness('claude', { PATH: bin() })).toBe('claude');
    expect(resolveHarness(null, { PATH: bin('claude') })).toBe('shell');
    expect(resolveHarness('codex', { PATH: bin() })).toBe('codex');
  });

  it('the menu says what the default means and which harnesses can start here', () => {
    const PATH = bin('codex');
    expect(harnessMenu('auto', { PATH })).toEqual({
      configured: 'auto',
      resolved: 'codex',
      installed: true,
      harnesses: [
        { name: 'shell', installed: true },
        { name: 'claude', installed: false },
        { name: 'codex', installed: true },
        { name: 'opencode', installed: false },
        { name: 'gemini', installed: false },
      ],
    });
    expect(harnessMenu('claude', { PATH })).toMatchObject({ configured: 'claude', resolved: 'claude', installed: false });
  });
});
