import { TrellisError } from '../../events/index.js';
import { hashPassword, hubConfigPath, readHubConfig, updateHubFile, verifyPassword } from './hub-config.js';
import { serially } from './write-queue.js';

/** Shortest admin password accepted. */
export const MIN_PASSWORD_LENGTH = 8;

/**
 * Why `password` cannot be an admin password, or null. A login form cannot type a control character
 * (a tab, an escape), so a password holding one would lock everyone out.
 */
export function passwordProblem(password: string): string | null {
  if (password === '') return 'the password is empty; nothing was changed';
  const control = /[\u0000-\u001f\u007f-\u009f]/.exec(password);
  if (control) {
    const code = `U+${control[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    return `the password holds a control character (${code} at position ${control.index + 1}), which a login form cannot type; nothing was changed. Choose one without tabs, escapes or other control characters`;
  }
  if ([...password].length < MIN_PASSWORD_LENGTH) return `the password must have at least ${MIN_PASSWORD_LENGTH} characters; nothing was changed`;
  return null;
}

export interface AdminPasswordChange {
  /** The new password. */
  readonly password: string;
  /**
   * Who vouches for the change. `host-user`: the machine's own user (the CLI), who can write hub.json
   * anyway. `current`: the caller typed the current password, checked here whenever one is set (the
   * gateway's page; whether the caller may ask at all, loopback or a login, is the gateway's to decide).
   */
  readonly proof: { readonly kind: 'host-user' } | { readonly kind: 'current'; readonly current: string | undefined };
}

/**
 * Sets or changes the admin password (`trellis dashboard password`, `POST /auth/password`): checks the
 * new one, checks the current one where the proof is the current password, and stores only its scrypt
 * hash in hub.json (atomically, every other key kept). Every gateway reading that hub.json ends its
 * logins on the change (gateway-state.ts). Answers whether a password was first set or changed.
 */
export async function setAdminPassword(home: string, change: AdminPasswordChange): Promise<{ readonly first: boolean }> {
  const problem = passwordProblem(change.password);
  if (problem) throw new TrellisError('INVALID_INPUT', problem);
  const before = readHubConfig(home).adminPassword;
  if (before && change.proof.kind === 'current') {
    if (change.proof.current === undefined || change.proof.current === '') throw new TrellisError('BAD_PASSWORD', 'the current admin password is needed to change it; nothing was changed');
    if (!(await verifyPassword(change.proof.current, before))) throw new TrellisError('BAD_PASSWORD', 'the current admin password is wrong; nothing was changed');
  }
  const hash = await hashPassword(change.password);
  // Re-read right before the write, in hub.json's one write queue (write-queue.ts): a password set
  // meanwhile (another tab, the CLI) is never overwritten on the strength of a check made against the
  // state before it, and no other writer's change to hub.json is lost under this one.
  await serially(hubConfigPath(home), async () => {
    if (readHubConfig(home).adminPassword !== before) throw new TrellisError('STALE_REVISION', 'the admin password changed while this change was checked; nothing was changed. Try again');
    await updateHubFile(home, { adminPassword: hash });
  });
  return { first: !before };
}
