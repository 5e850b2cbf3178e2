import { type } from 'arktype';

export { readAs, readList } from './reads.js';

// Apart from the driver, and loaded by its first pull or create: compiling these schemas (and loading
// arktype at all) costs a process tens of milliseconds, which a verb that never reaches the forge must
// not pay (issue 40). test/import-graph.test.ts keeps arktype off every CLI verb's static import graph.

const user = type({ login: 'string' });

/** The fields of Forgejo's / Gitea's /api/v1 objects (their swagger `Issue`, `Comment`, `Label`) this driver reads. */
export const forgejoReads = {
  issue: type({
    number: 'number',
    title: 'string',
    body: 'string',
    state: 'string',
    html_url: 'string',
    user: user.or('null'),
    labels: type({ id: 'number', name: 'string', color: 'string' }).array().or('null'),
    created_at: 'string',
    updated_at: 'string',
  }),
  comment: type({ id: 'number', issue_url: 'string', body: 'string', user: user.or('null'), created_at: 'string', updated_at: 'string' }),
  created: type({ number: 'number', html_url: 'string' }),
};
export type FjIssue = typeof forgejoReads.issue.infer;
export type FjComment = typeof forgejoReads.comment.infer;
