import { TrellisError } from '../../events/index.js';
import { encodeProject } from '../trellis-home.js';
import { addToCatalog, readCatalogForWrite } from './project-catalog.js';
import type { KnownProject } from './project-list.js';
import { prepareRegistration, type RegisterRequest } from './register.js';
import { hostEnv } from './run-cli.js';

export interface Registered {
  readonly project: KnownProject;
  /** False when the project was already cataloged (registering again changes nothing). */
  readonly added: boolean;
  /** Every step's transcript (`git init`, `trellis init`), whole, in order. */
  readonly transcript: string;
}

/**
 * Registers the folder `req.path` with the host: prepares it (git init and trellis init when asked,
 * normalized to its main checkout), then catalogs it. A malformed catalog refuses before anything runs
 * (it is never rewritten); a failed step refuses with its exit code and transcript, cataloging nothing.
 */
export async function registerProject(home: string, req: RegisterRequest, env?: NodeJS.ProcessEnv, now: Date = new Date()): Promise<Registered> {
  readCatalogForWrite(home);
  const prepared = await prepareRegistration(req, hostEnv(home, env));
  const transcript = prepared.steps.map((s) => s.transcript).join('');
  if (!prepared.ok) {
    const command = prepared.failed.transcript.split('\n')[0]!.replace(/^\$ /, '');
    throw new TrellisError('STEP_FAILED', `'${command}' exited ${prepared.failed.exitCode}; nothing was registered`, { details: { exitCode: prepared.failed.exitCode, transcript } });
  }
  const added = await addToCatalog(home, prepared.root, now);
  return { project: { id: encodeProject(prepared.root), root: prepared.root, cataloged: true }, added, transcript };
}
