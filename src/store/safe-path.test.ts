import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSettings } from './project/config.js';
import { confinedPath, isBelow, requireNodeId, unsafeRelativePath } from './safe-path.js';

const base = mkdtempSync(join(tmpdir(), 'trellis-safe-path-'));
const root = join(base, 'root');
mkdirSync(join(root, 'inside'), { recursive: true });
writeFileSync(join(base, 'outside.md'), 'secret');
writeFileSync(join(root, 'inside', 'ok.md'), 'fine');
symlinkSync(join(base, 'outside.md'), join(root, 'inside', 'out.md'));
symlinkSync(base, join(root, 'up'));
symlinkSync('ok.md', join(root, 'inside', 'in.md'));
symlinkSync('loop-b', join(root, 'loop-a'));
symlinkSync('loop-a', join(root, 'loop-b'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('unsafeRelativePath', () => {
  it.each(['', '..', 'a/../b', './a', 'a//b', '/etc/passwd', 'a\u0000b', 'a\\..\\b', 'a/', 'x'.repeat(513), `${'y'.repeat(256)}/z`])('refuses %j', (p) => {
    expect(unsafeRelativePath(p)).not.toBeNull();
  });
  it.each(['a', 'a/b.md', 'auth/login', '.trellis/plugins', 'a..b'])('accepts %j', (p) => expect(unsafeRelativePath(p)).toBeNull());
});

describe('confinedPath resolves symlinks', () => {
  it('keeps a plain file, a missing file and a link that stays inside', () => {
    expect(confinedPath(root, 'inside/ok.md')).toBe(join(root, 'inside/ok.md'));
    expect(confinedPath(root, 'inside/not-yet/new.md')).toBe(join(root, 'inside/not-yet/new.md'));
    expect(confinedPath(root, 'inside/in.md')).toBe(join(root, 'inside/in.md'));
  });
  it('refuses a link out, a path through a linked folder, a loop and dot-dot', () => {
    expect(confinedPath(root, 'inside/out.md')).toBeNull();
    expect(confinedPath(root, 'up/outside.md')).toBeNull();
    expect(confinedPath(root, 'up/not-there.md')).toBeNull();
    expect(confinedPath(root, 'loop-a')).toBeNull();
    expect(confinedPath(root, '../outside.md')).toBeNull();
    expect(isBelow(join(root, 'inside'), join(root, 'inside', '..', 'up'))).toBe(false);
  });
});

describe('edge validation', () => {
  it('node ids', () => {
    expect(requireNodeId('auth/login')).toBe('auth/login');
    for (const bad of ['../x', 'a/../../b', '/abs', 'a\u0000', 'n'.repeat(600)]) expect(() => requireNodeId(bad)).toThrow(/not a node id/);
  });
  it('config folders stay inside the project', () => {
    for (const [key, value] of [['specRoot', '../x'], ['pluginRoot', '../../etc'], ['pluginRoot', '/etc'], ['specRoot', 'a\u0000b']]) {
      writeFileSync(join(root, 'trellis.json'), JSON.stringify({ [key!]: value }));
      expect(() => loadSettings(root)).toThrow(new RegExp(`"${key}" must be a folder inside the project`));
    }
    rmSync(join(root, 'trellis.json'));
  });
});
