import { spawn } from 'node:child_process';
import { nodeIdOf, parseSpecNode } from '../../projections/spec-node.js';
import { readYaml } from './read-yaml.js';
import { uniqueScenarios, type ScenarioDecl } from '../../projections/scenarios.js';
import { git } from '../git/run-git.js';

/**
 * Every scenario the spec tree declares at `commit`, read from git's objects (not a working tree, which
 * may hold edits of its own): what a session's checks are fixed to at dispatch (DESIGN.md §14).
 */
export async function scenariosAtCommit(root: string, commit: string, specRoot: string): Promise<ScenarioDecl[]> {
  const listed = (await git(root, ['ls-tree', '-r', '-z', '--format=%(objectname) %(path)', commit, '--', `${specRoot}/`])).split('\0').filter(Boolean);
  const files = listed.flatMap((line) => {
    const space = line.indexOf(' ');
    const path = line.slice(space + 1);
    const id = path.startsWith(`${specRoot}/`) ? nodeIdOf(path.slice(specRoot.length + 1)) : null;
    return id && !path.split('/').some((seg) => seg.startsWith('.')) ? [{ oid: line.slice(0, space), path, id }] : [];
  });
  if (files.length === 0) return [];
  const texts = await readBlobs(root, files.map((f) => f.oid));
  const ids = new Set(files.map((f) => f.id));
  const parentOf = (id: string): string | null => {
    const parts = id.split('/');
    for (let n = parts.length - 1; n > 0; n--) if (ids.has(parts.slice(0, n).join('/'))) return parts.slice(0, n).join('/');
    return null;
  };
  const nodes = files.map((f, i) => parseSpecNode(f.id, f.path, texts[i]!, parentOf, readYaml)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return uniqueScenarios(nodes).flatMap((n) => n.scenarios);
}

/** The blobs' texts, in order, through one `git cat-file --batch`. */
function readBlobs(root: string, oids: readonly string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const proc = spawn('git', ['cat-file', '--batch'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    proc.stdout.on('data', (c: Buffer) => chunks.push(c));
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    proc.on('error', reject);
    proc.on('close', (code) => {
      if (code !== 0) return reject(new Error(`git cat-file --batch failed: ${stderr.trim()}`));
      const out = Buffer.concat(chunks);
      const texts: string[] = [];
      let at = 0;
      for (let i = 0; i < oids.length; i++) {
        const nl = out.indexOf(0x0a, at);
        const size = Number(out.subarray(at, nl).toString().split(' ')[2]);
        texts.push(out.subarray(nl + 1, nl + 1 + size).toString('utf8'));
        at = nl + 1 + size + 1;
      }
      resolve(texts);
    });
    proc.stdin.end(oids.join('\n') + '\n');
  });
}
