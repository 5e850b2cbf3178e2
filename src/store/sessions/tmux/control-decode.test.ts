import { describe, expect, it } from 'vitest';
import { decodeOctal, encodeOctal, LineSplitter, parseControlLine } from './control-decode.js';

const all256 = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

describe('control mode decoding', () => {
  it('decodes every byte value back exactly', () => {
    const encoded = encodeOctal(all256);
    // tmux escapes only bytes below 0x20 and the backslash: no newline can appear inside a line.
    expect(encoded.includes(0x0a)).toBe(false);
    expect(decodeOctal(encoded).equals(all256)).toBe(true);
  });

  it('parses %output and %extended-output lines into the pane and its raw bytes', () => {
    const line = Buffer.concat([Buffer.from('%output %12 '), encodeOctal(all256)]);
    const parsed = parseControlLine(line);
    expect(parsed).toMatchObject({ kind: 'output', pane: '%12' });
    expect(parsed.kind === 'output' && parsed.bytes.equals(all256)).toBe(true);
    const ext = parseControlLine(Buffer.concat([Buffer.from('%extended-output %3 17 : '), encodeOctal(Buffer.from('a : b\\'))]));
    expect(ext.kind === 'output' && ext.bytes.toString()).toBe('a : b\\');
    // Asked for no bytes (a watch that only needs to know the pane wrote): the pane, nothing decoded.
    expect(parseControlLine(line, false)).toEqual({ kind: 'output', pane: '%12', bytes: Buffer.alloc(0) });
    expect(parseControlLine(Buffer.from('%extended-output %3 17 : a\\012'), false)).toEqual({ kind: 'output', pane: '%3', bytes: Buffer.alloc(0) });
  });

  it('keeps a UTF-8 sequence split between two %output lines whole once joined', () => {
    const text = Buffer.from('héllo 😀 wörld', 'utf8');
    const cut = text.indexOf(0xf0) + 2; // inside the emoji's four bytes
    const lines = [text.subarray(0, cut), text.subarray(cut)].map((part) => Buffer.concat([Buffer.from('%output %1 '), encodeOctal(part), Buffer.from('\n')]));
    const wire = Buffer.concat(lines);
    const got: Buffer[] = [];
    const splitter = new LineSplitter();
    // Fed one byte at a time: lines are whole whatever the pipe's chunking.
    for (let i = 0; i < wire.length; i++) splitter.push(wire.subarray(i, i + 1), (l) => {
      const p = parseControlLine(l);
      if (p.kind === 'output') got.push(p.bytes);
    });
    expect(got).toHaveLength(2);
    expect(got[0]!.toString('utf8')).not.toBe(text.subarray(0, cut).toString('latin1'));
    expect(Buffer.concat(got).equals(text)).toBe(true);
    expect(Buffer.concat(got).toString('utf8')).toBe('héllo 😀 wörld');
  });

  it('leaves a backslash that does not start an escape alone, and classifies notices', () => {
    expect(decodeOctal(Buffer.from('a\\9b\\01')).toString()).toBe('a\\9b\\01');
    expect(parseControlLine(Buffer.from('%begin 1 2 1'))).toEqual({ kind: 'begin', tag: '1 2', ours: true });
    expect(parseControlLine(Buffer.from('%end 1 2 0'))).toEqual({ kind: 'end', tag: '1 2', ours: false });
    expect(parseControlLine(Buffer.from('%pause %4'))).toEqual({ kind: 'pause', pane: '%4' });
    expect(parseControlLine(Buffer.from('%exit server exited'))).toEqual({ kind: 'exit', reason: 'server exited' });
    // As tmux 3.3a wrote them to a hub (pane-hub.ts): a window's layout, its close, a pane's subscribed value.
    expect(parseControlLine(Buffer.from('%layout-change @3 b25d,80x24,0,0,3 b25d,80x24,0,0,3 *'))).toEqual({ kind: 'layout', window: '@3' });
    expect(parseControlLine(Buffer.from('%unlinked-window-close @0'))).toEqual({ kind: 'window-close', window: '@0' });
    expect(parseControlLine(Buffer.from('%subscription-changed dead $2 @1 1 %1 : 1'))).toEqual({ kind: 'subscription', name: 'dead', pane: '%1', value: '1' });
  });
});
