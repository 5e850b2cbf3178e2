import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { hubConfigPath, readHubFile, updateHubFile } from './hub-config.js';
import { serially } from './write-queue.js';

/**
 * Other machines the gateway reaches over SSH (issue 31), kept in hub.json under `hosts`. SSH is the
 * transport and the authentication: an entry holds only how to reach the machine, never a secret.
 */
export interface HostEntry {
  /** The host's name in project ids (`<name>~<slot>`) and on the page. */
  readonly name: string;
  /** Anything `ssh` takes as its destination (`user@box`, a `~/.ssh/config` alias). */
  readonly destination: string;
  /** How to run Trellis there: a command line the remote shell runs (default `trellis`). */
  readonly trellis: string;
  /** Passed as `ssh -F <file>`. */
  readonly sshConfig?: string;
}

/** Short and id-safe: it becomes a prefix of project ids and of a control socket's file name. */
const NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;

function asEntry(raw: unknown): HostEntry | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const r = raw as Record<string, unknown>;
  if (typeof r.name !== 'string' || !NAME.test(r.name) || typeof r.destination !== 'string' || typeof r.trellis !== 'string') return null;
  return { name: r.name, destination: r.destination, trellis: r.trellis, ...(typeof r.sshConfig === 'string' ? { sshConfig: r.sshConfig } : {}) };
}

/** The registered hosts, by name order; an entry of the wrong shape is skipped. */
export function readHosts(home: string): HostEntry[] {
  const raw = readHubFile(home).config.hosts;
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((h) => asEntry(h) ?? []).sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** What `hosts add` takes. */
export interface HostInput {
  readonly name: string;
  readonly destination: string;
  readonly trellis?: string;
  readonly sshConfig?: string;
}

/** The entry `input` describes, or INVALID_INPUT naming what is wrong and how to write it. */
export function checkHost(input: HostInput): HostEntry {
  if (!NAME.test(input.name)) throw new TrellisError('INVALID_INPUT', `host name '${input.name}' must be 1–32 lowercase letters, digits or '-', starting with a letter or digit`);
  const d = input.destination;
  // A destination starting with '-' would be read by ssh as an option (`-oProxyCommand=...`).
  if (!d || d.startsWith('-') || /\s/.test(d) || d.length > 255) throw new TrellisError('INVALID_INPUT', `ssh destination '${d}' must be one word not starting with '-' (user@host, host, or an alias from your ssh config)`);
  const trellis = input.trellis ?? 'trellis';
  if (!trellis.trim() || /[\n\r]/.test(trellis)) throw new TrellisError('INVALID_INPUT', '--trellis must be one non-empty line (the command that runs Trellis on that host)');
  if (input.sshConfig !== undefined) {
    if (!isAbsolute(input.sshConfig)) throw new TrellisError('INVALID_INPUT', `--ssh-config '${input.sshConfig}' must be an absolute path`);
    let file = false;
    try {
      file = statSync(input.sshConfig).isFile();
    } catch {}
    if (!file) throw new TrellisError('INVALID_INPUT', `--ssh-config ${input.sshConfig} is not a file`);
  }
  return { name: input.name, destination: d, trellis, ...(input.sshConfig !== undefined ? { sshConfig: input.sshConfig } : {}) };
}

/** Registers a host; a name already taken is CONFLICT (remove it first), so an entry is never silently replaced. */
export function addHost(home: string, input: HostInput): Promise<HostEntry> {
  const entry = checkHost(input);
  // hub.json changes one at a time, its other writers' changes included (write-queue.ts).
  return serially(hubConfigPath(home), async () => {
    const hosts = readHosts(home);
    if (hosts.some((h) => h.name === entry.name)) throw new TrellisError('HOST_EXISTS', `a host named ${entry.name} is registered already; remove it first (trellis hosts rm ${entry.name})`);
    await updateHubFile(home, { hosts: [...hosts, entry] });
    return entry;
  });
}

/** Forgets a host (its projects leave the list; nothing on the host is touched); NOT_FOUND when unknown. */
export function removeHost(home: string, name: string): Promise<HostEntry> {
  return serially(hubConfigPath(home), async () => {
    const hosts = readHosts(home);
    const found = hosts.find((h) => h.name === name);
    if (!found) throw new TrellisError('NOT_FOUND', `no host named ${name} (trellis hosts ls lists them)`);
    await updateHubFile(home, { hosts: hosts.filter((h) => h !== found) });
    return found;
  });
}
