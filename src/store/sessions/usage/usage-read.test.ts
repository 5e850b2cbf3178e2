import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeUsage, codexUsage, newLines, type RawEntry } from './usage-read.js';

const REC = join(import.meta.dirname, '../../../../test/agents/recordings');
const dir = mkdtempSync(join(tmpdir(), 'trellis-usage-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface FakeAnswer {
  kind: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}
const sum = (xs: readonly Omit<FakeAnswer, 'kind'>[]) =>
  xs.reduce((a, x) => ({ input: a.input + x.input, output: a.output + x.output, cacheRead: a.cacheRead + x.cacheRead, cacheWrite: a.cacheWrite + x.cacheWrite }), { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });

/** A recording's lines after its `_meta`, and what the fake answered when it was made. */
function recording(name: string): { lines: string[]; main: FakeAnswer[] } {
  const [meta, ...lines] = readFileSync(join(REC, name), 'utf8').trimEnd().split('\n');
  const answers = (JSON.parse(meta!) as { _meta: { fake_answers: FakeAnswer[] } })._meta.fake_answers;
  return { lines, main: answers.filter((a) => a.kind !== 'side') };
}

/** Reads `lines` as the agent writes them, in pieces cut at `cuts` (bytes), folding entries by key as the session's fold does. */
async function readInPieces(lines: string[], cuts: number[], read: (lines: string[]) => { entries: readonly RawEntry[]; turns: number }) {
  const file = join(dir, `t-${Math.random().toString(36).slice(2)}.jsonl`);
  const text = `${lines.join('\n')}\n`;
  writeFileSync(file, '');
  const byKey = new Map<string, RawEntry>();
  let turns = 0;
  let offset = 0;
  let written = 0;
  for (const cut of [...cuts, text.length]) {
    appendFileSync(file, text.slice(written, cut));
    written = cut;
    const got = await newLines(file, offset);
    if (!got) continue;
    offset = got.to;
    const r = read(got.lines);
    for (const e of r.entries) byKey.set(e.key, e);
    turns += r.turns;
  }
  return { total: sum([...byKey.values()]), turns, offset, size: Buffer.byteLength(text) };
}

describe.each(['2.1.197', '2.1.332'])("Claude Code %s's transcript (recorded)", (version) => {
  const { lines, main } = recording(`claude-code-${version}-transcript.jsonl`);
  it('totals equal the fake model’s answers to the main conversation, each message once though its lines repeat its id', async () => {
    // The recording has a message written as two lines of one id: summing lines would count it twice.
    const ids = lines.filter((l) => l.includes('"type":"assistant"')).map((l) => (JSON.parse(l) as { message: { id: string } }).message.id);
    expect(new Set(ids).size).toBeLessThan(ids.length);
    const whole = await readInPieces(lines, [], claudeUsage);
    expect(whole.total).toEqual(sum(main));
    expect(whole.turns).toBe(2);
    expect(whole.offset).toBe(whole.size);
  });
  it('read in pieces cut anywhere (mid-line, between the lines of one message), the totals are the same', async () => {
    const text = `${lines.join('\n')}\n`;
    for (const n of [3, 7, 13]) {
      const cuts = Array.from({ length: n }, (_, i) => Math.floor(((i + 1) * text.length) / (n + 1)));
      expect((await readInPieces(lines, cuts, claudeUsage)).total).toEqual(sum(main));
    }
  });
});

describe('streamed placeholder usage and sidechain replays', () => {
  const line = (id: string, output: number, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ type: 'assistant', ...extra, message: { id, model: 'claude-opus-4-8', usage: { input_tokens: 10, output_tokens: output, cache_read_input_tokens: 100, cache_creation_input_tokens: 5 } } });
  it('an early line’s placeholder output is replaced by the final one, even when a read ends between them', async () => {
    const lines = [line('msg_a', 1), line('msg_a', 1), line('msg_a', 250), line('msg_b', 40)];
    for (const cut of [0, lines[0]!.length + 1, lines[0]!.length + lines[1]!.length + 2]) {
      const r = await readInPieces(lines, cut ? [cut] : [], claudeUsage);
      expect(r.total).toEqual({ input: 20, output: 290, cacheRead: 200, cacheWrite: 10 });
    }
  });
  it('a sidechain line replaying a parent’s message counts once; a sub-agent’s own message counts', async () => {
    const lines = [line('msg_a', 30), line('msg_a', 30, { isSidechain: true }), line('msg_sub', 7, { isSidechain: true })];
    expect((await readInPieces(lines, [], claudeUsage)).total).toEqual({ input: 20, output: 37, cacheRead: 200, cacheWrite: 10 });
  });
  it('the context in use is the main conversation’s latest response, not a sub-agent’s', () => {
    const r = claudeUsage([line('msg_a', 30), line('msg_sub', 7, { isSidechain: true })]);
    expect(r.context).toEqual({ model: 'claude-opus-4-8', used: 10 + 100 + 5 + 30, window: null });
  });
});

describe("Codex 0.169.0's rollout (recorded)", () => {
  const { lines, main } = recording('codex-0.169.0-rollout.jsonl');
  it('the latest cumulative total equals the fake model’s answers to the conversation (input split from cached input)', () => {
    const r = codexUsage(lines, 'rollout.jsonl', { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, null);
    expect(sum(r.entries)).toEqual(sum(main));
    expect(r.turns).toBe(2);
    expect(r.entries[0]!.model).toBe('gpt-fake');
    expect(r.context).toMatchObject({ model: 'gpt-fake', window: 258400 });
  });
  it('read in two pieces, the second entry is only what the first did not count', () => {
    const cut = lines.findIndex((l) => l.includes('"token_count"')) + 1;
    const first = codexUsage(lines.slice(0, cut), 'r', { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, null);
    const second = codexUsage(lines.slice(cut), 'r', sum(first.entries), first.context!.model);
    expect(sum([...first.entries, ...second.entries])).toEqual(sum(main));
    expect(first.entries[0]!.key).not.toBe(second.entries[0]!.key);
    // Nothing new: no entry.
    expect(codexUsage(lines.slice(cut), 'r', sum(main), 'gpt-fake').entries).toEqual([]);
  });
  it('a read that ends before the first total (over the app-server, at turn/started) records nothing, so the next read still has the model', () => {
    const cut = lines.findIndex((l) => l.includes('"token_count"'));
    const early = codexUsage(lines.slice(0, cut), 'r', { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, null);
    expect(early).toEqual({ entries: [], turns: 0, context: null });
    // The caller commits nothing for it and reads the same bytes again with the answer.
    const r = codexUsage(lines, 'r', { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, null);
    expect(new Set(r.entries.map((e) => e.model))).toEqual(new Set(['gpt-fake']));
  });
});
