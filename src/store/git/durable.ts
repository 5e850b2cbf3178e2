import { closeSync, fsyncSync, openSync } from 'node:fs';

/*
 * Power loss is not SIGKILL. A killed process leaves what it wrote in the page cache, and the kernel
 * writes it out; a host that loses power keeps only what reached the disk. A rename can reach the disk
 * before the bytes of the file it publishes: after the crash the ref exists and is zero-length, or points
 * at an object that is. A peer that stores a ref per agent turn broke every fetch, push and gc of its
 * users' repositories that way (t3code, issue #10905). So every file Trellis publishes into git is
 * fsynced before its rename, and the folder that holds it after, so the rename itself is on the disk.
 */

// Module-level on purpose: a process-wide switch that only the append bench turns off (see below).
let extraSyncs = true;

/**
 * For `npm run bench -- append` only: the same appends without the object and folder syncs added for
 * power loss, to report their cost side by side in one run. Never turned off anywhere else.
 */
export function setPowerLossSyncs(on: boolean): void {
  extraSyncs = on;
}

/** fsync of a file about to be renamed into place. */
export function syncFile(fd: number): void {
  if (extraSyncs) fsyncSync(fd);
}

/** fsync of a folder after a rename into it (or a new entry), so the new name survives a power cut. */
export function syncDir(dir: string): void {
  if (!extraSyncs) return;
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * `-c` options for a git child that writes objects, packs or refs for Trellis (fast-import, update-ref,
 * gc, fetch): git's own fsync of every component it writes, with a real fsync (git's defaults leave loose
 * objects and refs to the page cache).
 */
export function gitSyncArgs(): string[] {
  return extraSyncs ? ['-c', 'core.fsync=objects,reference,derived-metadata', '-c', 'core.fsyncMethod=fsync'] : [];
}
