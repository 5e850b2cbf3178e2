import { type } from 'arktype';

export { readAs, readList } from './reads.js';

// Apart from the driver, and loaded by its first pull or create: compiling these schemas (and loading
// arktype at all) costs a process tens of milliseconds, which a verb that never reaches the forge must
// not pay (issue 40). test/import-graph.test.ts keeps arktype off every CLI verb's static import graph.

const user = type({ username: 'string' });

/** The fields of GitLab's v4 objects this driver reads; nothing else is trusted to be there. */
export const gitlabReads = {
  issue: type({
    iid: 'number',
    title: 'string',
    description: 'string | null',
    state: 'string',
    web_url: 'string',
    author: user.or('null'),
    // with_labels_details=true: each label an object with its colors
    labels: type({ name: 'string', color: 'string', 'text_color?': 'string | null' }).array(),
    created_at: 'string',
    updated_at: 'string',
    user_notes_count: 'number',
  }),
  note: type({ id: 'number', body: 'string', author: user.or('null'), created_at: 'string', updated_at: 'string', system: 'boolean' }),
  created: type({ iid: 'number', web_url: 'string' }),
};
export type GlIssue = typeof gitlabReads.issue.infer;
export type GlNote = typeof gitlabReads.note.infer;
