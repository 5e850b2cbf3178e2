import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { TrellisError } from '../../events/index.js';
import { readSpecTree } from '../spec/spec-tree.js';
import { CONFIG_FILE, LOCAL_CONFIG_FILE, loadSettings, readConfigFile } from '../project/config.js';
import { openProject } from '../compose/open-project.js';
import { findRepository, requireRoot } from '../project/repository.js';

const FIRST_NODE = `---
title: Overview
status: draft
---
# Overview

What this project is for, in a few sentences. Every other node hangs below this one.

## Goals

## Non-goals
`;

/**
 * What `trellis init` did: the project's root, one line per change (none: it was set up already), and one
 * line per thing it would have created but left alone, saying why (a folder that already has spec nodes
 * gets no `index.md`).
 */
export interface InitOutcome {
  readonly root: string;
  readonly said: readonly string[];
  readonly skipped: readonly string[];
  /** The set-up's files not in a commit yet, and the commands that commit them (null when all are). */
  readonly uncommitted: { paths: string[]; commit: string } | null;
}

/**
 * Sets the folder `cwd` up as a Trellis project: a git repository (only with `git`), a `trellis.json`
 * (recording `harness` when given), a first spec node, and the local config ignored by git. Running it
 * again changes nothing.
 */
export async function initProject(cwd: string, opts: { harness?: string; git?: boolean } = {}): Promise<InitOutcome> {
  const said: string[] = [];
  const skipped: string[] = [];
  let root: string;
  try {
    root = requireRoot(openProject(cwd));
  } catch (err) {
    if (!(err instanceof TrellisError && err.code === 'NOT_A_REPOSITORY')) throw err;
    if (opts.git !== true) {
      throw new TrellisError('NOT_A_REPOSITORY', `${cwd} is not a git repository; run 'trellis init --git' to create one here, or 'git init' yourself`);
    }
    const r = spawnSync('git', ['init', '-q'], { cwd, encoding: 'utf8' });
    if (r.status !== 0) throw new TrellisError('GIT_FAILED', `git init failed: ${r.stderr.trim()}`);
    root = findRepository(cwd).root!;
    said.push(`created a git repository in ${root}`);
  }

  const configPath = join(root, CONFIG_FILE);
  const config = readConfigFile(configPath);
  const harness = opts.harness;
  if (config === null) {
    writeFileSync(configPath, `${JSON.stringify({ specRoot: 'specs', ...(harness ? { harness } : {}) }, null, 2)}\n`);
    said.push(`wrote ${CONFIG_FILE}`);
  } else if (harness && config.harness !== harness) {
    writeFileSync(configPath, `${JSON.stringify({ ...config, harness }, null, 2)}\n`);
    said.push(`recorded harness '${harness}' in ${CONFIG_FILE}`);
  } else {
    skipped.push(`kept ${CONFIG_FILE} as it is (it exists)`);
  }

  const { specRoot } = loadSettings(root);
  const specDir = join(root, specRoot);
  const nodes = existsSync(specDir) ? readSpecTree(root, specRoot).nodes.length : 0;
  if (!nodes) {
    mkdirSync(specDir, { recursive: true });
    writeFileSync(join(specDir, 'index.md'), FIRST_NODE, { flag: 'wx' });
    said.push(`wrote ${specRoot}/index.md, a first node`);
  } else {
    skipped.push(`did not write ${specRoot}/index.md: ${specRoot}/ already holds ${nodes} spec ${nodes === 1 ? 'node' : 'nodes'}`);
  }

  const ignorePath = join(root, '.gitignore');
  const ignore = existsSync(ignorePath) ? readFileSync(ignorePath, 'utf8') : '';
  if (!ignore.split('\n').some((l) => l.trim() === LOCAL_CONFIG_FILE || l.trim() === `/${LOCAL_CONFIG_FILE}`)) {
    writeFileSync(ignorePath, `${ignore}${ignore && !ignore.endsWith('\n') ? '\n' : ''}${LOCAL_CONFIG_FILE}\n`);
    said.push(`added ${LOCAL_CONFIG_FILE} to .gitignore`);
  } else {
    skipped.push(`kept .gitignore as it is (it ignores ${LOCAL_CONFIG_FILE})`);
  }
  return { root, said, skipped, uncommitted: uncommittedSetup(root, [CONFIG_FILE, specRoot, '.gitignore']) };
}

/**
 * Which of the set-up's files are not in a commit yet, and the commands that commit them: a session's
 * worktree starts from trunk's last commit, so until they are committed no session sees the spec tree or
 * the settings (a new user's sessions had no specs/ at all). Null when all are committed.
 */
export function uncommittedSetup(root: string, paths: readonly string[]): { paths: string[]; commit: string } | null {
  const r = spawnSync('git', ['status', '--porcelain', '--untracked-files=all', '--', ...paths], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) return null;
  const dirty = paths.filter((p) => r.stdout.split('\n').some((l) => l.length > 3 && (l.slice(3) === p || l.slice(3).startsWith(`${p}/`))));
  if (!dirty.length) return null;
  return { paths: dirty, commit: `git add ${dirty.join(' ')} && git commit -m 'Set up Trellis'` };
}
