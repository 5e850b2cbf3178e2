import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { tempDir } from './repo.js';

/**
 * A real OpenSSH server of the test's own (never the machine's sshd or ~/.ssh): its own host key, an
 * authorized key made here, on a loopback port; and an ssh client config that trusts exactly that host key.
 */
export interface TestSshd {
  /** `ssh -F <this>` reaches the server as `remote`. */
  readonly sshConfig: string;
  readonly port: number;
  readonly dir: string;
  /** Kills the server and every connection it serves (its process group). */
  kill(): Promise<void>;
  /** Starts it again on the same port with the same keys. */
  start(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function startSshd(): Promise<TestSshd> {
  // Run as root, sshd insists on its (empty) privilege-separation folder, which only its service makes.
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const dir = tempDir();
  const key = (name: string) => execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', join(dir, name)]);
  key('host_key');
  key('client_key');
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'client_key.pub')));
  const port = await freePort();
  writeFileSync(
    join(dir, 'sshd_config'),
    [
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'host_key')}`,
      'PidFile none',
      'UsePAM no',
      'StrictModes no',
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'AllowTcpForwarding yes',
      'MaxSessions 50',
      'MaxStartups 50',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'known_hosts'), `[127.0.0.1]:${port} ${readFileSync(join(dir, 'host_key.pub'), 'utf8').split(' ').slice(0, 2).join(' ')}\n`);
  const sshConfig = join(dir, 'ssh_config');
  writeFileSync(
    sshConfig,
    [
      'Host remote',
      '  HostName 127.0.0.1',
      `  Port ${port}`,
      `  User ${userInfo().username}`,
      `  IdentityFile ${join(dir, 'client_key')}`,
      '  IdentitiesOnly yes',
      `  UserKnownHostsFile ${join(dir, 'known_hosts')}`,
      '  GlobalKnownHostsFile /dev/null',
      '  BatchMode yes',
      '',
    ].join('\n'),
  );
  let proc: ChildProcess | undefined;
  const start = async () => {
    // Its own process group, so a kill takes the per-connection processes too.
    proc = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', join(dir, 'sshd_config'), '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    let said = '';
    proc.stderr!.on('data', (d: Buffer) => (said += d.toString()));
    const deadline = Date.now() + 10_000;
    for (;;) {
      const up = await new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1');
        s.once('connect', () => (s.destroy(), resolve(true)));
        s.once('error', () => resolve(false));
      });
      if (up) return;
      if (proc.exitCode !== null || proc.signalCode !== null || Date.now() > deadline) throw new Error(`sshd did not start: ${said}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await start();
  return {
    sshConfig,
    port,
    dir,
    start,
    kill: async () => {
      const p = proc;
      // Killed by a signal, a process has a signalCode and no exitCode.
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      const gone = new Promise((r) => p.once('exit', r));
      // Per-connection processes start sessions of their own (setsid): each is found by its parent.
      const all = descendants(p.pid!);
      for (const pid of [p.pid!, ...all]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
      await gone;
    },
  };
}

/** Every process below `pid`, from /proc. */
function descendants(pid: number): number[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' });
  const children = new Map<number, number[]>();
  for (const line of out.trim().split('\n')) {
    const [c, p] = line.trim().split(/\s+/).map(Number) as [number, number];
    children.set(p, [...(children.get(p) ?? []), c]);
  }
  const found: number[] = [];
  const stack = [pid];
  while (stack.length) for (const c of children.get(stack.pop()!) ?? []) (found.push(c), stack.push(c));
  return found;
}
