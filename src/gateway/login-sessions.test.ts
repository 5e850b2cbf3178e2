import { describe, expect, it } from 'vitest';
import { attemptKey, LoginLimiter } from './login-sessions.js';

describe('whom login attempts count against', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:aaaa::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:bbbb:cccc:dddd:eeee', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002::', '2001:db8:1:2::/64'],
    ['2001:db8:1:3::1', '2001:db8:1:3::/64'],
    ['2001:db8::1', '2001:db8::/64'],
    ['2001:0:0:5:1:2:3:4', '2001:0:0:5::/64'],
    ['::1', '::/64'],
    ['fe80::1%eth0', 'fe80::/64'],
  ])('%s → %s', (address, key) => {
    expect(attemptKey(address)).toBe(key);
  });

  it('a host rotating its IPv6 address within its /64 is refused after the limit, as one address is', () => {
    const limiter = new LoginLimiter(5, 60_000);
    const now = 1_000_000;
    const waits = Array.from({ length: 7 }, (_, i) => limiter.attempt(`${attemptKey(`2001:db8:1:2::${(i + 1).toString(16)}`)} admin`, now));
    expect(waits.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    expect(waits.slice(5).every((w) => w === 60)).toBe(true);
    // Another /64 is another client.
    expect(limiter.attempt(`${attemptKey('2001:db8:1:3::1')} admin`, now)).toBe(0);
  });
});
