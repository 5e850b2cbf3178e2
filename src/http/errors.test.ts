import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { StaleRevisionError, TrellisError } from '../events/index.js';
import { onError } from './errors.js';

/** An app whose one route throws `err`, answered by the one onError. */
const answer = async (err: Error) => {
  const app = new Hono();
  app.get('/', () => {
    throw err;
  });
  app.onError(onError);
  const res = await app.request('/');
  return { status: res.status, etag: res.headers.get('ETag'), body: (await res.json()) as Record<string, unknown> };
};

describe('onError for the host verbs’ codes', () => {
  it('maps each to its status; details travel beside the error; a stale revision names the current one in ETag', async () => {
    expect(await answer(new StaleRevisionError('changed', 'abc'))).toEqual({ status: 412, etag: '"abc"', body: { error: { code: 'STALE_REVISION', message: 'changed' } } });
    const step = await answer(new TrellisError('STEP_FAILED', "'trellis init' exited 1", { details: { exitCode: 1, transcript: '$ trellis init\n' } }));
    expect(step).toEqual({ status: 422, etag: null, body: { error: { code: 'STEP_FAILED', message: "'trellis init' exited 1" }, exitCode: 1, transcript: '$ trellis init\n' } });
    expect((await answer(new TrellisError('SERVE_FAILED', 'no', { details: { logTail: 'tail' } }))).status).toBe(504);
    expect((await answer(new TrellisError('CATALOG_MALFORMED', 'no'))).status).toBe(409);
    expect((await answer(new TrellisError('PRECONDITION_REQUIRED', 'no'))).status).toBe(428);
    // A serve's start-up refusals (said by the CLI) have their statuses in the one table too.
    expect((await answer(new TrellisError('PORT_IN_USE', 'no'))).status).toBe(409);
    expect((await answer(new TrellisError('ALREADY_SERVING', 'no'))).status).toBe(409);
    expect((await answer(new TrellisError('BIND_FAILED', 'no'))).status).toBe(500);
    expect((await answer(new TrellisError('BOOT_FAILED', 'no'))).status).toBe(500);
  });
});
