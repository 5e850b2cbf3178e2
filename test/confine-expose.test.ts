import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { confinedAgentCommand } from '../src/store/sessions/confine/confine-agents.js';
import { BIN, cleanupRepos, git, tempDir, tempRepo } from './helpers/repo.js';
import { waitFor } from './helpers/sessions.js';

/*
 * A confined agent's own server that Trellis drives (opencode's, issue 45): the sandbox has a network of
 * its own, so a server inside is reached from outside only through the relay, at the port Trellis chose
 * (`expose`), and its endpoint file is the one file of the Trellis home mounted back (`reveal`). Real
 * bubblewrap and the real relay; the "agent" is a small node server inside, standing in for opencode.
 */

const running: ChildProcess[] = [];
afterEach(() => {
  for (const c of running.splice(0)) if (c.pid) process.kill(-c.pid, 'SIGKILL');
});
afterAll(() => cleanupRepos());

const freePort = (): Promise<number> =>
  new Promise((done) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => done(port));
    });
  });

describe('a confined agent’s own server', () => {
  it('is reached from outside at its exposed port through the relay, and nowhere else; it reads its revealed endpoint file and no other file of the Trellis home', async () => {
    const dir = tempRepo();
    const home = join(tempDir(), 'trellis-home');
    const worktree = join(home, 'worktrees', 's1');
    git(dir, 'worktree', 'add', '-q', '-b', 'trellis/s1', worktree);
    mkdirSync(join(home, 'opencode'), { recursive: true });
    const endpoint = join(home, 'opencode', 's1.json');
    writeFileSync(endpoint, '{"password":"its-own"}\n');
    writeFileSync(join(home, 'hub.json'), '{"secret":"hub-secret"}\n');
    const [exposed, hidden] = [await freePort(), await freePort()];
    // Two servers inside, each saying what the sandbox lets it read: one at the exposed port, one not.
    const server = `const fs=require('fs');const say=()=>{const r=(f)=>{try{return fs.readFileSync(f,'utf8').trim()}catch{return 'unreadable'}};return JSON.stringify({endpoint:r(${JSON.stringify(endpoint)}),hub:r(${JSON.stringify(join(home, 'hub.json'))})})};for(const p of [${exposed},${hidden}])require('http').createServer((q,s)=>s.end(say())).listen(p,'127.0.0.1');`;
    const agentHome = tempDir();
    const env = { ...process.env, HOME: agentHome, XDG_CONFIG_HOME: join(agentHome, '.config') };
    const plan = { worktree, mainRoot: dir, trellisHome: home, home: agentHome, branch: 'trellis/s1', reveal: [endpoint] };
    const line = confinedAgentCommand(env, plan, 'opencode', 's1', BIN, [], `exec ${JSON.stringify(process.execPath)} -e ${JSON.stringify(server)}`, [exposed]);
    const child = spawn('/bin/sh', ['-c', line], { cwd: worktree, env, stdio: 'ignore', detached: true });
    running.push(child);

    const got = await waitFor('the server inside to answer at the exposed port', async () => {
      try {
        return (await (await fetch(`http://127.0.0.1:${exposed}/`, { signal: AbortSignal.timeout(2_000) })).json()) as { endpoint: string; hub: string };
      } catch {
        return false;
      }
    }, 20_000);
    expect(got).toEqual({ endpoint: '{"password":"its-own"}', hub: 'unreadable' });
    // The other port inside is in the sandbox's network only: nothing answers it on the person's loopback.
    await expect(fetch(`http://127.0.0.1:${hidden}/`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
  }, 30_000);

  it('sends nothing to a host socket the agent put in place of its relay socket: Trellis\'s request (its password) reaches no other program, and the client is told why', async () => {
    const dir = tempRepo();
    const home = join(tempDir(), 'trellis-home');
    const worktree = join(home, 'worktrees', 's1');
    git(dir, 'worktree', 'add', '-q', '-b', 'trellis/s1', worktree);
    // Another program's control socket on the host, recording every byte it is sent (and saying nothing).
    const hostSocket = join(tempDir(), 'control.sock');
    const received: Buffer[] = [];
    const host = createServer((sock) => sock.on('data', (d: Buffer) => received.push(d)).on('error', () => {}));
    await new Promise<void>((done) => host.listen(hostSocket, done));
    const exposed = await freePort();
    // The hostile agent: once its relay's socket is up, it replaces it with a symlink to the host's socket
    // (the relay's folder is the one the sandbox writes), then says so in its worktree.
    const agent = `in="$(dirname "$TRELLIS_SIGNAL_RELAY")/in"; until [ -S "$in/${exposed}.sock" ]; do sleep 0.05; done; rm "$in/${exposed}.sock"; ln -s ${JSON.stringify(hostSocket)} "$in/${exposed}.sock"; touch replaced; exec sleep 60`;
    const agentHome = tempDir();
    const env = { ...process.env, HOME: agentHome, XDG_CONFIG_HOME: join(agentHome, '.config') };
    const plan = { worktree, mainRoot: dir, trellisHome: home, home: agentHome, branch: 'trellis/s1', reveal: [] };
    const line = confinedAgentCommand(env, plan, 'opencode', 's1', BIN, [], agent, [exposed]);
    const child = spawn('/bin/sh', ['-c', line], { cwd: worktree, env, stdio: 'ignore', detached: true });
    running.push(child);
    try {
      await waitFor('the agent to replace its relay socket', () => existsSync(join(worktree, 'replaced')), 20_000);
      // Trellis's own request, as the watcher or `session answer` sends it: opencode's password in its head.
      const res = await fetch(`http://127.0.0.1:${exposed}/event`, { headers: { authorization: 'Basic b3BlbmNvZGU6c2VjcmV0' }, signal: AbortSignal.timeout(15_000) }).catch((e: Error) => e);
      expect(Buffer.concat(received).toString('latin1')).toBe('');
      expect(res).toBeInstanceOf(Response);
      expect((res as Response).status).toBe(502);
      expect(await (res as Response).text()).toMatch(/did not identify itself as this session's relay/);
    } finally {
      host.close();
    }
  }, 40_000);
});
