import { describe, expect, it } from 'vitest';
import { initialSession } from '../../../projections/index.js';
import { claudeTranscript } from './usage-verb.js';

const state = { ...initialSession('s1'), harness: 'claude', agentSessionId: 'aee4469a-b7ea-428e-a493-cb9d13ac9dcf' };
const sid = state.agentSessionId;

describe('a transcript path from a hook payload (the agent’s, untrusted)', () => {
  it.each([
    ['the transcript’s own shape', `/home/u/.claude/projects/-home-u-repo/${sid}.jsonl`, true],
    ['another session’s transcript', '/home/u/.claude/projects/-home-u-repo/00000000-0000-4000-8000-000000000000.jsonl', false],
    ['a file of the user’s', '/home/u/.ssh/id_ed25519', false],
    ['a device', '/dev/zero', false],
    ['a relative path', `projects/x/${sid}.jsonl`, false],
    ['not under projects/<dir>/', `/home/u/.claude/${sid}.jsonl`, false],
    ['a traversal that ends in the right name', `/home/u/.claude/projects/../../../etc/${sid}.jsonl`, false],
  ])('%s: opened only in the transcript’s own shape', (_what, path, opened) => {
    expect(claudeTranscript({ session_id: sid, transcript_path: path }, state) !== null).toBe(opened);
  });
  it('a payload naming another agent conversation than the session’s is refused, its path in shape or not', () => {
    const other = '00000000-0000-4000-8000-000000000000';
    expect(claudeTranscript({ session_id: other, transcript_path: `/home/u/.claude/projects/-r/${other}.jsonl` }, state)).toBeNull();
  });
  it('a payload naming another session id with its own path is refused when the id is not a plain id', () => {
    expect(claudeTranscript({ session_id: '../../x', transcript_path: '/a/projects/b/../../x.jsonl' }, state)).toBeNull();
  });
});
