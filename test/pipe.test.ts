import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openIssue, replyToIssue } from '../src/store/issues/verbs.js';
import { openProject } from '../src/store/compose/open-project.js';
import { BIN, cleanupRepos, shell, tempRepo } from './helpers/repo.js';

afterAll(cleanupRepos);

describe('unbounded output into a pipe', () => {
  it('trellis issues --json of more than 5 MB arrives whole in a JSON parser', async () => {
    const dir = tempRepo();
    const p = openProject(dir);
    const filler = 'x'.repeat(50_000);
    for (let i = 0; i < 60; i++) {
      const { id } = await openIssue(p, { concern: `big ${i}`, body: `${i} ${filler}`, by: 'gen' });
      await replyToIssue(p, id, { body: `reply ${i} ${filler}`, by: 'gen' });
    }
    // A slow reader makes the pipe fill up; the writer must wait for it rather than exit early.
    const parser = join(dir, 'parse.mjs');
    shell(dir, `cat > ${parser} <<'JS'
let text = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { text += d; process.stdin.pause(); setTimeout(() => process.stdin.resume(), 1); });
process.stdin.on('end', () => { const list = JSON.parse(text); console.log(JSON.stringify({ bytes: Buffer.byteLength(text), n: list.length, last: list.at(-1).concern })); });
JS`);
    const out = JSON.parse(shell(dir, `node '${BIN}' issues --json | node ${parser}`));
    expect(out.bytes).toBeGreaterThan(5_000_000);
    expect(out).toMatchObject({ n: 60, last: 'big 0' });

    // The same through a socket pair (how node, and so agents and the dashboard, spawn the CLI), where
    // node's writes are asynchronous: a slow reader still gets every byte before the writer exits.
    const child = spawn(process.execPath, [BIN, 'issues', '--json'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const chunks: Buffer[] = [];
    for await (const chunk of child.stdout) {
      chunks.push(chunk as Buffer);
      await new Promise((resolve) => setImmediate(resolve)); // read a little at a time
    }
    expect(await exited).toBe(0);
    expect(JSON.parse(Buffer.concat(chunks).toString())).toHaveLength(60);
  });
});
