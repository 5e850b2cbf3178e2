import { describe, expect, it } from 'vitest';
import { parseStreamRef, streamRef, STREAM_KINDS, SYNCED_KINDS } from './stream-names.js';

describe('stream names: made and parsed in one place', () => {
  it('parses what it makes, for every kind, full or relative to refs/', () => {
    for (const { kind, cause } of STREAM_KINDS) {
      const ref = streamRef(kind, 'a1b2');
      expect(parseStreamRef(ref)).toEqual({ kind, id: 'a1b2', lock: false, cause });
      expect(parseStreamRef(`${ref.slice('refs/'.length)}.lock`)).toEqual({ kind, id: 'a1b2', lock: true, cause });
    }
  });

  it("names an eval's ref key whole, and no id for what is not one stream", () => {
    expect(parseStreamRef('refs/trellis/evals/checkout+happy-path')?.id).toBe('checkout+happy-path');
    expect(parseStreamRef('trellis/issues')).toEqual({ kind: 'issues', lock: false, cause: 'issues' });
    expect(parseStreamRef('trellis/issues/a/b')?.id).toBeUndefined();
    expect(parseStreamRef('heads/main')).toBeUndefined();
    expect(parseStreamRef('trellis/issuesx/a')).toBeUndefined();
  });

  it('wip never travels and announces nothing', () => {
    expect(SYNCED_KINDS).toEqual(['issues', 'sessions', 'evals']);
    expect(parseStreamRef('trellis/wip/s1')).toEqual({ kind: 'wip', id: 's1', lock: false, cause: null });
  });
});
