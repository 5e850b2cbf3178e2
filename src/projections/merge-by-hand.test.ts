import { describe, expect, it } from 'vitest';
import { mergeByHand, shellWord } from './merge-by-hand.js';

describe('mergeByHand', () => {
  it('names the main checkout by its absolute path, checks trunk out there, merges with no editor', () => {
    expect(mergeByHand('/home/ann/shop', 'main', 'trellis/abc')).toEqual({
      main: '/home/ann/shop',
      commands: 'git -C /home/ann/shop switch main\ngit -C /home/ann/shop merge --no-ff --no-edit trellis/abc',
    });
  });
  it('quotes a word only when the shell needs it', () => {
    expect(mergeByHand("/tmp/my shop's", 'trunk', 'trellis/x').commands).toBe(`git -C '/tmp/my shop'\\''s' switch trunk\ngit -C '/tmp/my shop'\\''s' merge --no-ff --no-edit trellis/x`);
    expect(shellWord('a$b')).toBe("'a$b'");
  });
});
