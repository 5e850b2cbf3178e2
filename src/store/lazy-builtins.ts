import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * `node:child_process`, loaded on first use. Loading it (with net, dgram and streams behind it) costs
 * ~6 ms of start-up, which a CLI verb that forks no git process (`trellis issue reply`) need not pay.
 * Builtins resolve the same from any file, so this works from the bundle's chunks too.
 */
export const childProcess = (): typeof import('node:child_process') => require('node:child_process') as typeof import('node:child_process');

/** `node:net`, loaded on first use (~7 ms under load): only opencode's port finding uses it on the session path. */
export const net = (): typeof import('node:net') => require('node:net') as typeof import('node:net');

/**
 * `node:crypto`, loaded on first use (~6 ms of CPU at start-up under load, measured side by side): the
 * writers (object ids, random ids, evidence hashes) need it, a verb that only reads (`trellis board`) does not.
 */
export const crypto = (): typeof import('node:crypto') => require('node:crypto') as typeof import('node:crypto');
