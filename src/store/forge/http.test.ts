import { describe, expect, it } from 'vitest';
import { nextPageUrl, retryAfterMs } from './http.js';

const h = (o: Record<string, string>) => new Headers(o);
const u = 'https://git.example.com/api/v1/repos/a/b/issues?state=all&limit=50';

describe('pagination and Retry-After, by whichever header the forge sent', () => {
  it('follows Link rel=next, then X-Next-Page, then X-Total-Count against what was read; none on the last page', () => {
    expect(nextPageUrl(u, h({ link: '<https://x/p?page=2>; rel="next", <https://x/p?page=9>; rel="last"' }), 50)).toBe('https://x/p?page=2');
    expect(nextPageUrl(u, h({ link: '<https://x/p?page=1>; rel="first"' }), 50)).toBeNull();
    expect(nextPageUrl(`${u}&page=2`, h({ 'x-next-page': '3' }), 100)).toBe(`${u}&page=3`);
    expect(nextPageUrl(u, h({ 'x-next-page': '' }), 100)).toBeNull();
    // A proxy that drops Link: Forgejo's X-Total-Count still says whether there is more.
    expect(nextPageUrl(u, h({ 'x-total-count': '120' }), 50)).toBe(`${u}&page=2`);
    expect(nextPageUrl(`${u}&page=3`, h({ 'x-total-count': '120' }), 120)).toBeNull();
    expect(nextPageUrl(u, h({}), 50)).toBeNull();
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs(h({ 'retry-after': '7' }))).toBe(7000);
    const ms = retryAfterMs(h({ 'retry-after': new Date(Date.now() + 30_000).toUTCString() }))!;
    expect(ms).toBeGreaterThan(28_000);
    expect(ms).toBeLessThanOrEqual(30_000);
    expect(retryAfterMs(h({}))).toBeNull();
    expect(retryAfterMs(h({ 'retry-after': 'soon' }))).toBeNull();
  });
});
