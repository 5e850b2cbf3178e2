import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serveFace } from './serve-policy.js';

const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
/** A TRELLIS_HOME, with an admin password in its hub.json when `password`. */
const home = (password: boolean) => {
  const d = mkdtempSync(join(tmpdir(), 'trellis-serve-policy-'));
  made.push(d);
  if (password) writeFileSync(join(d, 'hub.json'), JSON.stringify({ adminPassword: 'scrypt$not-checked-here' }));
  return d;
};
const asked = (over: Partial<{ port: number; host: string; public: boolean }>) => ({ port: 8787, host: '127.0.0.1', public: false, ...over });

describe('serveFace: given the flags and the hub config, how a serve faces the network', () => {
  it.each([
    ['loopback, no password', asked({}), false, { public: false, api: { port: 8787, host: '127.0.0.1' } }],
    ['loopback ::1, no password', asked({ host: '::1' }), false, { public: false, api: { port: 8787, host: '::1' } }],
    ['--public with a password: the API moves to a free loopback port', asked({ public: true }), true, { public: true, api: { port: 0, host: '127.0.0.1' } }],
    ['a non-loopback host with a password is a public face too', asked({ host: '0.0.0.0' }), true, { public: true, api: { port: 0, host: '127.0.0.1' } }],
  ] as const)('%s', (_given, flags, password, face) => {
    expect(serveFace(flags, home(password))).toEqual(face);
  });

  it.each([
    ['--public without a password', asked({ public: true }), "serve --public refuses to start without an admin password. Repair: run 'trellis dashboard password' first"],
    [
      'a non-loopback host without a password',
      asked({ host: '0.0.0.0' }),
      "serve --host 0.0.0.0 refuses to start without an admin password (0.0.0.0 is not a loopback address: anyone who can reach it would run this project's terminals). Repair: run 'trellis dashboard password' first, or serve on --host 127.0.0.1",
    ],
  ] as const)('%s is refused, naming the repair', (_given, flags, message) => {
    expect(() => serveFace(flags, home(false))).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', message }));
  });
});
