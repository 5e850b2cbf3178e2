import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../write-atomic.js';
import { TrellisError } from '../../events/index.js';
import { isCode } from '../fs-errors.js';
import { parseNotifyConfig, type NotifyConfig } from './notify-config.js';

/**
 * A project's gate on `/p/:id/*` (DESIGN §10). A password gate may carry the `name` of the person it was
 * given to: that login's writes are filed under it (without one, as `human`).
 */
export type Gate = 'admin' | 'open' | { readonly password: string; readonly shell?: true; readonly name?: string };

/**
 * An identity-aware proxy in front of the gateway that the owner names (Tailscale Serve, oauth2-proxy):
 * the person it announces is believed only on a request whose TCP peer is one of `from`.
 */
export interface IdentityProxy {
  readonly kind: 'tailscale' | 'oauth2-proxy';
  /** The proxy's own addresses, as the gateway sees the connection's peer (`127.0.0.1` for a proxy on this machine). */
  readonly from: readonly string[];
}

/** `$TRELLIS_HOME/hub.json`: the gateway's own settings. Only these keys are read. */
export interface HubConfig {
  /** `$scrypt$ln=..,r=..,p=..$salt$hash`, never plaintext. */
  readonly adminPassword?: string;
  readonly gates?: Readonly<Record<string, Gate>>;
  readonly icon?: string;
  /** Extra Host names the gateway answers to (its public names). */
  readonly allowedHosts?: readonly string[];
  readonly tls?: { readonly cert: string; readonly key: string };
  /** Who is told when a session needs a person (notify-config.ts). */
  readonly notify?: NotifyConfig;
  /** The hub's owner: the admin login's writes are filed under this name (default: the gateway user's git `user.name`). */
  readonly owner?: string;
  readonly identityProxy?: IdentityProxy;
}

export const hubConfigPath = (home: string): string => join(home, 'hub.json');

/** The raw hub.json object and its revision (the file's mtime and size; `absent` when missing). */
export function readHubFile(home: string): { config: Record<string, unknown>; revision: string } {
  const path = hubConfigPath(home);
  let text: string;
  let revision: string;
  try {
    const st = statSync(path, { bigint: true });
    revision = `${st.mtimeNs.toString(36)}-${st.size.toString(36)}-${st.ino.toString(36)}`;
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (isCode(err, 'ENOENT')) return { config: {}, revision: 'absent' };
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new TrellisError('INVALID_INPUT', `${path} is not valid JSON (${(err as Error).message}); fix it or remove it`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new TrellisError('INVALID_INPUT', `${path} must hold a JSON object`);
  return { config: raw as Record<string, unknown>, revision };
}

/** The hub config, only its known keys, each checked for shape (a wrong shape reads as absent). */
export function readHubConfig(home: string): HubConfig {
  const { config: raw } = readHubFile(home);
  const gates: Record<string, Gate> = {};
  if (typeof raw.gates === 'object' && raw.gates !== null) {
    for (const [id, g] of Object.entries(raw.gates as Record<string, unknown>)) {
      if (g === 'admin' || g === 'open') gates[id] = g;
      else if (typeof g === 'object' && g !== null && typeof (g as { password?: unknown }).password === 'string') {
        // `shell` is granted only by the literal `true`: a password that opens the terminals is a shell as the host user.
        const name = (g as { name?: unknown }).name;
        gates[id] = {
          password: (g as { password: string }).password,
          ...((g as { shell?: unknown }).shell === true ? { shell: true as const } : {}),
          ...(typeof name === 'string' && name.trim() ? { name: name.trim() } : {}),
        };
      }
    }
  }
  return {
    ...(typeof raw.adminPassword === 'string' ? { adminPassword: raw.adminPassword } : {}),
    gates,
    ...(typeof raw.icon === 'string' ? { icon: raw.icon } : {}),
    allowedHosts: Array.isArray(raw.allowedHosts) ? raw.allowedHosts.filter((h): h is string => typeof h === 'string') : [],
    ...(typeof raw.tls === 'object' && raw.tls !== null && typeof (raw.tls as { cert?: unknown }).cert === 'string' && typeof (raw.tls as { key?: unknown }).key === 'string'
      ? { tls: { cert: (raw.tls as { cert: string }).cert, key: (raw.tls as { key: string }).key } }
      : {}),
    notify: parseNotifyConfig(raw.notify),
    ...(typeof raw.owner === 'string' && raw.owner.trim() ? { owner: raw.owner.trim() } : {}),
    ...identityProxyOf(raw.identityProxy),
  };
}

/** `identityProxy: {kind, from}`; `from` a string or a list of addresses. Any other shape reads as absent: no identity is believed. */
function identityProxyOf(v: unknown): { identityProxy?: IdentityProxy } {
  if (typeof v !== 'object' || v === null) return {};
  const { kind, from } = v as { kind?: unknown; from?: unknown };
  if (kind !== 'tailscale' && kind !== 'oauth2-proxy') return {};
  const list = (typeof from === 'string' ? [from] : Array.isArray(from) ? from : []).filter((a): a is string => typeof a === 'string' && a.trim() !== '').map((a) => a.trim());
  return list.length ? { identityProxy: { kind, from: list } } : {};
}

/** Writes hub.json atomically, changing only the given keys. */
export async function updateHubFile(home: string, patch: Record<string, unknown>): Promise<void> {
  const { config } = readHubFile(home);
  mkdirSync(home, { recursive: true });
  await writeAtomic(hubConfigPath(home), `${JSON.stringify({ ...config, ...patch }, null, 2)}\n`, { mode: 0o600 });
}

const scrypt = (password: string, salt: Buffer, keylen: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))));

/** Cost parameters: N = 2^15 (32 MiB, ~0.1 s here), r = 8, p = 1. */
const LN = 15;

/** An scrypt hash string `$scrypt$ln=15,r=8,p=1$<salt b64>$<hash b64>` of `password`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, 32, { N: 2 ** LN, r: 8, p: 1, maxmem: 64 << 20 });
  return `$scrypt$ln=${LN},r=8,p=1$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** Checks `password` against a hash string from hashPassword, in constant time; a malformed hash never matches. */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  const m = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(hash);
  if (!m) return false;
  const [ln, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (ln < 1 || ln > 20 || r < 1 || r > 32 || p < 1 || p > 16) return false;
  const expected = Buffer.from(m[5]!, 'base64');
  if (expected.length < 16) return false;
  const key = await scrypt(password, Buffer.from(m[4]!, 'base64'), expected.length, { N: 2 ** ln, r, p, maxmem: 256 << 20 });
  return timingSafeEqual(key, expected);
}
