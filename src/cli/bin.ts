#!/usr/bin/env node
import { main } from './main.js';
import { exitAfterFlush } from './output.js';

await exitAfterFlush(await main(process.argv.slice(2), process.cwd()));
