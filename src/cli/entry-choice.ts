import { statSync } from 'node:fs';

/**
 * Which module the executable loads: the bundle when it was built after the compiled sources it was
 * made from, else the unbundled entry. A bundle that is missing, or older than the compiled `run.js`
 * (tsc rewrites every output on each build, so any later `tsc` leaves it older), is never run: the
 * unbundled code is the current code, only slower to load.
 */
export function chooseEntry(bundle: URL, unbundled: URL): URL {
  try {
    return statSync(bundle).mtimeMs >= statSync(unbundled).mtimeMs ? bundle : unbundled;
  } catch {
    return unbundled;
  }
}
