import { describe, expect, it } from 'vitest';
import { OutputLog, stripAnsi } from './output-log.js';

describe('the output log', () => {
  it('stays within its limit and starts at a character boundary', () => {
    const log = new OutputLog(10);
    log.append(Buffer.from('abcdef'));
    log.append(Buffer.from('ghé😀', 'utf8'));
    expect(log.size).toBeLessThanOrEqual(10);
    const text = log.contents().toString('utf8');
    expect(text).not.toContain('\ufffd');
    expect(text.endsWith('😀')).toBe(true);
  });

  it('gives the last lines without escapes unless asked', () => {
    const log = new OutputLog();
    log.append(Buffer.from('one\r\n\x1b[31mtwo\x1b[0m\r\nthree'));
    expect(log.tail(2)).toBe('two\nthree');
    expect(log.tail(2, true)).toContain('\x1b[31m');
    expect(stripAnsi('\x1b]0;title\x07x\x1b[?1049hy')).toBe('xy');
  });
});
