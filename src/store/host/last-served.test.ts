import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeEndpointRecord, writeEndpointRecord } from './endpoint-record.js';
import { encodeProject } from '../trellis-home.js';
import { lastServed } from './last-served.js';
import { knownProjects } from './project-list.js';

const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), 'trellis-last-served-'));
  made.push(d);
  return d;
};

describe('a served project’s folder, remembered after its serve stops', () => {
  it('is found by id once the record is gone, without listing the project', async () => {
    const home = dir();
    const root = dir();
    const id = encodeProject(root);
    await writeEndpointRecord(home, { version: 1, url: 'http://127.0.0.1:1/', pid: 1, instanceId: 'i1', root, identity: { toplevel: root, gitCommonDir: join(root, '.git'), worktree: false }, startedAt: new Date().toISOString() });
    expect(removeEndpointRecord(home, root, 'i1')).toBe(true);
    expect(knownProjects(home).projects).toEqual([]);
    expect(lastServed(home, id)).toEqual({ id, root, cataloged: false });
  });

  it('a note naming another folder than its slot, a folder that is gone, or an id that is not a slot name: nothing', async () => {
    const home = dir();
    const root = dir();
    const other = dir();
    const id = encodeProject(root);
    await writeEndpointRecord(home, { version: 1, url: 'http://127.0.0.1:1/', pid: 1, instanceId: 'i1', root, identity: { toplevel: root, gitCommonDir: join(root, '.git'), worktree: false }, startedAt: new Date().toISOString() });
    writeFileSync(join(home, 'projects', id, 'root'), `${other}\n`);
    expect(lastServed(home, id)).toBeNull();
    writeFileSync(join(home, 'projects', id, 'root'), `${root}\n`);
    rmSync(root, { recursive: true });
    expect(lastServed(home, id)).toBeNull();
    expect(lastServed(home, '..')).toBeNull();
    expect(lastServed(home, `../${id}`)).toBeNull();
  });
});
