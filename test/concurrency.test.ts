import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mergedIssues } from '../src/store/issues/merged-list.js';
import { openProject } from '../src/store/compose/open-project.js';
import { openIssue } from '../src/store/issues/verbs.js';
import { cleanupRepos, fsck, git, run, ROOT, tempRepo, testEnv } from './helpers/repo.js';

afterAll(cleanupRepos);

const WORKERS = 4;
const REPLIES = 100;

describe('concurrent writers in separate processes', () => {
  it('4 × 100 replies to one thread and 4 × 100 to distinct threads, all at once: every reply present, fsck clean', async () => {
    const dir = tempRepo();
    const p = openProject(dir);
    const shared = (await openIssue(p, { concern: 'contended', by: 'setup' })).id;
    const distinct: string[][] = [];
    for (let w = 0; w < WORKERS; w++) {
      const ids: string[] = [];
      for (let i = 0; i < REPLIES; i++) ids.push((await openIssue(p, { concern: `own ${w}-${i}`, by: 'setup' })).id);
      distinct.push(ids);
    }

    const worker = (tag: string, ids: string[]) =>
      run(process.execPath, [join(ROOT, 'test/helpers/reply-worker.mjs'), dir, tag, String(REPLIES), ...ids], { cwd: dir, env: testEnv(dir) });
    const results = await Promise.all([
      ...Array.from({ length: WORKERS }, (_, w) => worker(`shared${w}`, [shared])),
      ...distinct.map((ids, w) => worker(`distinct${w}`, ids)),
    ]);
    for (const r of results) expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });

    const { issues, problems } = await mergedIssues(openProject(dir));
    expect(problems).toEqual([]);
    const contended = issues.find((i) => i.id === shared)!;
    const bodies = contended.replies.map((r) => r.body).sort();
    const expected = Array.from({ length: WORKERS }, (_, w) => Array.from({ length: REPLIES }, (_, i) => `shared${w}-${i}`)).flat().sort();
    expect(bodies).toEqual(expected);
    // each worker's own replies land in the order it wrote them
    for (let w = 0; w < WORKERS; w++) {
      const mine = contended.replies.filter((r) => r.by === `shared${w}`).map((r) => r.body);
      expect(mine).toEqual(Array.from({ length: REPLIES }, (_, i) => `shared${w}-${i}`));
    }
    distinct.forEach((ids, w) =>
      ids.forEach((id, i) => expect(issues.find((x) => x.id === id)!.replies.map((r) => r.body)).toEqual([`distinct${w}-${i}`])),
    );
    // one commit per write, a linear history
    expect(git(dir, 'rev-list', '--count', `refs/trellis/issues/${shared}`).trim()).toBe(String(1 + WORKERS * REPLIES));
    expect(git(dir, 'rev-list', '--merges', '--count', `refs/trellis/issues/${shared}`).trim()).toBe('0');
    expect(fsck(dir)).toBe('');
  });
});
