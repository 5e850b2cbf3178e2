#!/usr/bin/env node
// Runs `npm run build` unless dist/ was built from the inputs as they are now. CI installs (npm ci's prepare
// builds) and then tests (pretest): the second build of the same sources cost about 14 s of CPU at the start of
// every run for nothing. "As they are now" is the newest modification time and the number of the build's input
// files (a file added, edited or removed changes one of them); the record is written with what the inputs were
// when the build started, so an edit made during a build is built by the next run.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = import.meta.dirname;
const RECORD = join(ROOT, 'dist', '.build-inputs.json');
// What tsconfig.json, cli.rolldown.config.mjs and src/dashboard's build read, and what decides their output.
const INPUT_DIRS = ['src', 'bench', 'test/forge', 'test/fake-model', 'test/push'];
const INPUT_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'cli.rolldown.config.mjs', 'build-when-stale.mjs'];

function inputs() {
  let newest = 0;
  let count = 0;
  const see = (path) => {
    const st = statSync(path);
    newest = Math.max(newest, st.mtimeMs);
    count++;
  };
  for (const dir of INPUT_DIRS) {
    see(join(ROOT, dir));
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) see(join(e.parentPath, e.name));
  }
  for (const f of INPUT_FILES) see(join(ROOT, f));
  return { newest, count };
}

const now = inputs();
const built = existsSync(RECORD) ? JSON.parse(readFileSync(RECORD, 'utf8')) : null;
const outputs = ['dist/src/cli/bin.js', 'dist/cli/run.js', 'dist/dashboard/index.html'].every((f) => existsSync(join(ROOT, f)));
if (built && outputs && built.newest === now.newest && built.count === now.count) {
  console.log('build: dist/ is current (no input changed since it was built)');
} else {
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  writeFileSync(RECORD, `${JSON.stringify(now)}\n`);
}
