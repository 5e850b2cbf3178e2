import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * yaml's `parse`, loaded on first use: loading the package costs a process ~18 ms, which a verb that reads
 * no spec node's front matter (`trellis issue reply`, a hook's `session signal`) must not pay (issue 40).
 */
export const readYaml = (text: string): unknown => (require('yaml') as typeof import('yaml')).parse(text);
