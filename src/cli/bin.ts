#!/usr/bin/env node
import { chooseEntry } from './entry-choice.js';

// One bundled file (plus lazy chunks for the big verbs) loads in a fraction of the time of the many small
// modules it is made from; see entry-choice.ts for when the unbundled entry runs instead.
const entry = chooseEntry(new URL('../../cli/run.js', import.meta.url), new URL('./run.js', import.meta.url));
const { run } = (await import(entry.href)) as typeof import('./run.js');
await run(process.argv.slice(2), process.cwd());
