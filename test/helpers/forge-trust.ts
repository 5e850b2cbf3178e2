import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Allows the forge entries a test commits in trellis.json (its loopback stand-ins: plain http, another
 * host) in the project's own trellis.local.json, as a person would (issue 46: a committed file alone
 * cannot send a token there). Merged into whatever the local file already holds.
 */
export function trustForges(dir: string, entries: readonly { host: string; apiUrl: string; tokenEnv?: string }[]): void {
  const path = join(dir, 'trellis.local.json');
  const local = existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>) : {};
  writeFileSync(path, JSON.stringify({ ...local, trustedForges: entries.map((e) => ({ host: e.host, apiUrl: e.apiUrl, ...(e.tokenEnv ? { tokenEnv: e.tokenEnv } : {}) })) }));
}
