import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ForgejoForge } from './forge/forgejo-forge.js';
import { GitHubForge } from './forge/github-forge.js';
import { GitLabForge } from './forge/gitlab-forge.js';
import { cleanupRepos, tempRepo, trellis } from './helpers/repo.js';
import { trustForges } from './helpers/forge-trust.js';

/*
 * Forges degrade one issue at a time (issue 39): an issue or a comment a driver cannot read is left out
 * with one note naming the forge, the issue and the field; every readable issue is listed, exit 0.
 */

interface Forge {
  start(): Promise<unknown>;
  stop(): Promise<void>;
  seed(input: { title: string }): number;
  seedComment(n: number, body: string, user?: string): void;
  readonly broken: Map<number, string>;
}

const forges: { name: string; make: () => Forge; config: (apiUrl: string) => object; host: string; comments: (f: Forge) => { id: number; n: number }[]; breakComment: (f: Forge, id: number, field: string) => void }[] = [
  {
    name: 'GitHub',
    host: 'github.com',
    make: () => new GitHubForge(),
    config: (apiUrl) => ({ driver: 'github', host: 'github.com', repo: 'acme/shop', apiUrl }),
    comments: (f) => (f as GitHubForge).comments.map((c) => ({ id: c.id, n: c.issue })),
    breakComment: (f, id, field) => (f as GitHubForge).brokenComments.set(id, field),
  },
  {
    name: 'GitLab',
    host: 'gitlab.com',
    make: () => new GitLabForge(),
    config: (apiUrl) => ({ driver: 'gitlab', host: 'gitlab.com', project: 'acme/shop', apiUrl }),
    comments: (f) => (f as GitLabForge).notes.map((c) => ({ id: c.id, n: c.iid })),
    breakComment: (f, id, field) => (f as GitLabForge).brokenNotes.set(id, field),
  },
  {
    name: 'Forgejo',
    host: 'codeberg.org',
    make: () => new ForgejoForge(),
    config: (apiUrl) => ({ driver: 'forgejo', host: 'codeberg.org', repo: 'acme/shop', apiUrl }),
    comments: (f) => (f as ForgejoForge).comments.map((c) => ({ id: c.id, n: c.number })),
    breakComment: (f, id, field) => (f as ForgejoForge).brokenComments.set(id, field),
  },
];

const started: Forge[] = [];
afterAll(async () => {
  for (const f of started) await f.stop().catch(() => {});
  cleanupRepos();
});

describe.each(forges)('$name: one issue or comment the driver cannot read', ({ make, config, host, comments, breakComment }) => {
  it('one malformed issue among 50: 49 listed, one note naming the forge, the issue and the field, exit 0 — on every run', async () => {
    const forge = make();
    started.push(forge);
    await forge.start();
    for (let i = 1; i <= 50; i++) forge.seed({ title: `Issue ${i}` });
    forge.broken.set(17, 'title');
    const dir = tempRepo();
    writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ forges: [config((forge as unknown as { apiUrl: string }).apiUrl)] }));
    trustForges(dir, [{ host, apiUrl: (forge as unknown as { apiUrl: string }).apiUrl }]);
    // The second run reads what the first saved (GitLab and Forgejo pull only what changed): the note stays.
    for (const run of [1, 2]) {
      const r = await trellis(dir, ['issue', 'ls', '--all', '--json']);
      expect([run, r.code]).toEqual([run, 0]);
      const ids = (JSON.parse(r.stdout) as { id: string }[]).map((i) => i.id);
      expect(ids).toHaveLength(49);
      expect(ids).not.toContain(`${host}#17`);
      const notes = r.stderr.trim().split('\n');
      expect(notes).toHaveLength(1);
      expect(notes[0]).toContain(host);
      expect(notes[0]).toContain('#17');
      expect(notes[0]).toContain('title');
    }
    // Repaired on the forge (and touched, as an edit touches it): listed again, no note.
    forge.broken.delete(17);
    forge.seedComment(17, 'fixed');
    const healed = await trellis(dir, ['issue', 'ls', '--all', '--json']);
    expect([healed.code, healed.stderr, (JSON.parse(healed.stdout) as unknown[]).length]).toEqual([0, '', 50]);
  });

  it('one malformed comment in a page of comments: the issue is listed with the others, one note naming the issue and the field', async () => {
    const forge = make();
    started.push(forge);
    await forge.start();
    forge.seed({ title: 'Talkative' });
    forge.seed({ title: 'Quiet' });
    for (let i = 1; i <= 5; i++) forge.seedComment(1, `comment ${i}`, 'alice');
    const third = comments(forge).filter((c) => c.n === 1)[2]!;
    breakComment(forge, third.id, 'created_at');
    const dir = tempRepo();
    writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ forges: [config((forge as unknown as { apiUrl: string }).apiUrl)] }));
    trustForges(dir, [{ host, apiUrl: (forge as unknown as { apiUrl: string }).apiUrl }]);
    const r = await trellis(dir, ['issue', 'ls', '--all', '--json']);
    expect(r.code).toBe(0);
    const issues = JSON.parse(r.stdout) as { id: string; replies: { body: string }[] }[];
    expect(issues.map((i) => i.id).sort()).toEqual([`${host}#1`, `${host}#2`]);
    expect(issues.find((i) => i.id === `${host}#1`)!.replies.map((x) => x.body)).toEqual(['comment 1', 'comment 2', 'comment 4', 'comment 5']);
    const notes = r.stderr.trim().split('\n');
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain(host);
    expect(notes[0]).toContain('#1');
    expect(notes[0]).toContain('created_at');
  });
});
