import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import config, { SHARED_PROCESS_FILES } from '../vitest.config.js';
import { ROOT } from './helpers/repo.js';

/**
 * What a test file may not do if it runs in a worker process shared with other files (vitest.config.ts
 * SHARED_PROCESS_FILES): anything that outlives the file in the process. Writing the environment, a module
 * mock, fake timers and chdir all would.
 */
const PROCESS_WIDE = /process\.env\.[A-Z_]+ *=[^=]|process\.env\[[^\]]+\] *=[^=]|delete process\.env|Object\.assign\(process\.env|vi\.(mock|doMock|stubEnv|stubGlobal|useFakeTimers)\(|process\.chdir\(/;

describe('the files that share a worker process', () => {
  it('are listed by name (a new file starts isolated), and none of them writes process-wide state', () => {
    const listed = SHARED_PROCESS_FILES.filter((f) => f.startsWith('test/'));
    expect(listed.every((f) => f.endsWith('.test.ts') && !f.includes('*'))).toBe(true);
    expect(listed.filter((f) => PROCESS_WIDE.test(readFileSync(join(ROOT, f), 'utf8')))).toEqual([]);
    const projects = config.test?.projects as { test: { name: string; isolate?: boolean; include?: string[]; exclude?: string[] } }[];
    expect(projects.map((p) => [p.test.name, p.test.isolate ?? true])).toEqual([
      ['shared', false],
      ['isolated', true],
    ]);
    expect(projects[1]!.test.exclude).toEqual([...SHARED_PROCESS_FILES]);
  });

  it('catches a file that writes the environment or mocks a module', () => {
    // Spelled with P for `process` (and V for `vi`), so that this file, which runs shared, does not itself read as one that writes them.
    const writes = ["P.env.HOME = '/x';", 'delete P.env.TRELLIS_HOME;', "V.mock('../src/x.js');", 'V.useFakeTimers();', "P.chdir('/tmp');"];
    for (const src of writes.map((w) => w.replace('P.', 'process.').replace('V.', 'vi.'))) expect(PROCESS_WIDE.test(src)).toBe(true);
    for (const src of ["const env = { ...process.env, HOME: '/x' };", "process.env.HOME === '/x'", 'expect(process.env.HOME).toBeDefined();']) expect(PROCESS_WIDE.test(src)).toBe(false);
  });
});
