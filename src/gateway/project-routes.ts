import type { HttpBindings } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { homedir } from 'node:os';
import { TrellisError } from '../events/index.js';
import { errorBody } from '../http/errors.js';
import { encodeProject } from '../store/endpoint-record.js';
import { readRawConfig, writeRawConfig } from '../store/host/config-seam.js';
import { browse } from '../store/host/fs-browse.js';
import { readHubFile, updateHubFile } from '../store/host/hub-config.js';
import { addToCatalog, CatalogBrokenError, readCatalog, removeFromCatalog } from '../store/host/project-catalog.js';
import { knownProjects, listProjects, projectRow, type KnownProject, type ProjectList } from '../store/host/project-list.js';
import { prepareRegistration } from '../store/host/register.js';
import { runTrellis } from '../store/host/run-cli.js';
import { startDetachedServe } from '../store/host/start-serve.js';
import { harnessNames } from '../store/sessions/adapters/index.js';
import type { GatewayState } from './gateway-state.js';
import { ProjectFeed } from './project-feed.js';
import { callerOf, readJson } from './hub-context.js';

type Env = { Bindings: HttpBindings };
type Ctx = Context<Env>;

const HEARTBEAT_MS = 15_000;
const AUTH_RECHECK_MS = 1_000;

/** An ETag header value for a revision, and the revision an If-Match names. */
const etagOf = (revision: string) => `"${revision}"`;
const ifMatch = (c: Ctx) => c.req.header('If-Match')?.trim().replace(/^W\//, '').replace(/^"|"$/g, '');

/**
 * The hub's admin routes: the reconciled project list and its stream, registration, host operations,
 * the config seam and icons, and the directory browser. Every route here needs admin scope (checked by
 * the app before it routes).
 */
export function projectRoutes(state: GatewayState): Hono<Env> {
  const app = new Hono<Env>();
  const home = state.opts.home;
  const scoped = (list: ProjectList): ProjectList => (state.opts.only ? { ...list, projects: list.projects.filter((p) => p.id === state.opts.only) } : list);
  const list = async () => scoped(await listProjects(home, state.hub()));

  const project = (c: Ctx): KnownProject => {
    const id = c.req.param('id');
    const p = id && (!state.opts.only || id === state.opts.only) ? knownProjects(home).projects.find((x) => x.id === id) : undefined;
    if (!p) throw new ProjectNotFound(id ?? '');
    return p;
  };

  app.get('/projects', async (c) => c.json(await list()));

  const feed = new ProjectFeed(home, list);
  app.get('/projects/stream', (c) =>
    streamSSE(c, async (stream) => {
      const queue: string[] = [];
      let wake: (() => void) | undefined;
      let closed = false;
      const unsubscribe = feed.subscribe((body) => {
        queue.push(body);
        wake?.();
      });
      stream.onAbort(() => {
        closed = true;
        wake?.();
      });
      // A login that ends while its stream is open (logout, a new admin password) ends the stream too,
      // within a second (a stat of hub.json and a map lookup): the list never reaches a caller who may no
      // longer read it, and the page learns to ask for the login again.
      const admitted = () => callerOf(c, state).admin;
      const heartbeat = setInterval(() => void stream.write(': ping\n\n'), HEARTBEAT_MS);
      const recheck = setInterval(() => !admitted() && wake?.(), AUTH_RECHECK_MS);
      try {
        while (!closed) {
          if (!admitted()) break;
          const body = queue.shift();
          if (body !== undefined) await stream.writeSSE({ event: 'projects', data: body });
          else await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
      } finally {
        clearInterval(heartbeat);
        clearInterval(recheck);
        unsubscribe();
      }
    }),
  );

  app.post('/projects', async (c) => {
    const body = (await readJson(c)) as { path?: unknown; gitInit?: unknown; init?: unknown };
    if (typeof body !== 'object' || body === null || typeof body.path !== 'string') return c.json(errorBody('INVALID_INPUT', 'send {"path": "/abs/dir", "gitInit"?: true, "init"?: {"harness"?: "<name>"}}'), 400);
    if (body.gitInit !== undefined && typeof body.gitInit !== 'boolean') return c.json(errorBody('INVALID_INPUT', '"gitInit" must be true or false'), 400);
    const init = body.init as { harness?: unknown } | undefined;
    if (init !== undefined && (typeof init !== 'object' || init === null || (init.harness !== undefined && typeof init.harness !== 'string'))) {
      return c.json(errorBody('INVALID_INPUT', '"init" must be {"harness"?: "<name>"}'), 400);
    }
    // Refused before anything runs: a broken catalog is never rewritten.
    const catalog = readCatalog(home);
    if (catalog.error) return c.json(errorBody('CATALOG_MALFORMED', catalog.error), 409);
    const prepared = await prepareRegistration(
      { path: body.path, gitInit: body.gitInit === true, ...(init ? { init: { ...(typeof init.harness === 'string' ? { harness: init.harness } : {}) } } : {}) },
      { ...(state.opts.env ?? process.env), TRELLIS_HOME: home },
    );
    if (!prepared.ok) {
      return c.json(
        { ...errorBody('STEP_FAILED', `'${prepared.failed.transcript.split('\n')[0]!.replace(/^\$ /, '')}' exited ${prepared.failed.exitCode}; nothing was registered`), exitCode: prepared.failed.exitCode, transcript: prepared.steps.map((s) => s.transcript).join('') },
        422,
      );
    }
    try {
      await addToCatalog(home, prepared.root, new Date());
    } catch (err) {
      if (err instanceof CatalogBrokenError) return c.json(errorBody('CATALOG_MALFORMED', err.message), 409);
      throw err;
    }
    const row = await projectRow(home, state.hub(), { id: encodeProject(prepared.root), root: prepared.root, cataloged: true });
    return c.json({ project: row, transcript: prepared.steps.map((s) => s.transcript).join('') }, 201);
  });

  app.delete('/projects/:id', async (c) => {
    const id = c.req.param('id');
    const entry = readCatalog(home);
    if (entry.error) return c.json(errorBody('CATALOG_MALFORMED', entry.error), 409);
    const found = entry.entries.find((e) => encodeProject(e.root) === id);
    if (!found) return c.json(errorBody('NOT_FOUND', `no cataloged project ${id}`), 404);
    try {
      await removeFromCatalog(home, found.root);
    } catch (err) {
      if (err instanceof CatalogBrokenError) return c.json(errorBody('CATALOG_MALFORMED', err.message), 409);
      throw err;
    }
    return c.body(null, 204);
  });

  app.get('/fs', (c) => c.json(browse(c.req.query('path') || homedir())));

  const env = () => ({ ...(state.opts.env ?? process.env), TRELLIS_HOME: home });
  app.post('/projects/:id/init', async (c) => {
    const p = project(c);
    const body = (await readJson(c)) as { harness?: unknown };
    if (body.harness !== undefined && typeof body.harness !== 'string') return c.json(errorBody('INVALID_INPUT', '"harness" must be a string'), 400);
    return c.json(await runTrellis(p.root, ['init', ...(typeof body.harness === 'string' ? ['--harness', body.harness] : [])], env()));
  });
  app.post('/projects/:id/doctor', async (c) => c.json(await runTrellis(project(c).root, ['doctor'], env())));
  app.post('/projects/:id/serve', async (c) => {
    const p = project(c);
    const started = await startDetachedServe(home, p.root, { env: env() });
    if ('record' in started) return c.json({ online: true, url: started.record.url, pid: started.record.pid, proxy: `/p/${p.id}/` });
    return c.json({ ...errorBody('SERVE_FAILED', 'the backend did not come online; the log tail says why'), logTail: started.logTail }, 504);
  });

  app.get('/projects/:id/config', (c) => {
    const raw = readRawConfig(project(c).root);
    return c.body(raw.text, 200, { 'Content-Type': 'application/json; charset=utf-8', ETag: etagOf(raw.revision), 'Cache-Control': 'no-store' });
  });
  app.put('/projects/:id/config', async (c) => {
    const p = project(c);
    const expected = ifMatch(c);
    if (!expected) return c.json(errorBody('PRECONDITION_REQUIRED', 'send If-Match with the ETag of the config you read'), 428);
    const body = await readJson(c);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return c.json(errorBody('INVALID_INPUT', 'trellis.json must hold a JSON object at the top level'), 400);
    const r = await writeRawConfig(p.root, expected, () => body as Record<string, unknown>);
    if (!r.ok) return c.json(errorBody('STALE_REVISION', `the config changed since revision ${expected}; read it again`), 412, { ETag: etagOf(r.current) });
    return c.json({ ok: true, revision: r.revision }, 200, { ETag: etagOf(r.revision) });
  });
  app.put('/projects/:id/icon', async (c) => {
    const p = project(c);
    const expected = ifMatch(c);
    if (!expected) return c.json(errorBody('PRECONDITION_REQUIRED', 'send If-Match with the ETag of the config you read'), 428);
    const icon = iconOf(await readJson(c));
    const r = await writeRawConfig(p.root, expected, (current) => withIcon(current, icon));
    if (!r.ok) return c.json(errorBody('STALE_REVISION', `the config changed since revision ${expected}; read it again`), 412, { ETag: etagOf(r.current) });
    return c.json({ ok: true, revision: r.revision }, 200, { ETag: etagOf(r.revision) });
  });

  // The harness choice the dashboard offers for `init` (the same names `trellis init --harness` takes).
  app.get('/hub/harnesses', (c) => c.json({ harnesses: harnessNames() }));

  let hubWrites: Promise<unknown> = Promise.resolve();
  app.get('/hub/icon', (c) => {
    const { config, revision } = readHubFile(home);
    return c.json({ icon: typeof config.icon === 'string' ? config.icon : null }, 200, { ETag: etagOf(revision) });
  });
  app.put('/hub/icon', async (c) => {
    const expected = ifMatch(c);
    if (!expected) return c.json(errorBody('PRECONDITION_REQUIRED', 'send If-Match with the ETag of GET /hub/icon'), 428);
    const icon = iconOf(await readJson(c));
    const run = hubWrites.then(async () => {
      const now = readHubFile(home).revision;
      if (now !== expected) return { ok: false as const, current: now };
      await updateHubFile(home, { icon: icon ?? undefined });
      return { ok: true as const, current: readHubFile(home).revision };
    });
    hubWrites = run.catch(() => {});
    const r = await run;
    if (!r.ok) return c.json(errorBody('STALE_REVISION', `hub.json changed since revision ${expected}; read it again`), 412, { ETag: etagOf(r.current) });
    return c.json({ ok: true, revision: r.current }, 200, { ETag: etagOf(r.current) });
  });

  return app;
}

class ProjectNotFound extends TrellisError {
  constructor(id: string) {
    super('NOT_FOUND', `no project ${id} (neither cataloged nor served)`);
  }
}

/** An icon is a short string (an emoji, a name) or null to clear it. */
function iconOf(body: unknown): string | null {
  const icon = (body as { icon?: unknown }).icon;
  if (icon === null) return null;
  if (typeof icon !== 'string' || icon.length === 0 || icon.length > 2048) {
    throw new TrellisError('INVALID_INPUT', 'send {"icon": "<short string>"} or {"icon": null}');
  }
  return icon;
}

function withIcon(current: Record<string, unknown>, icon: string | null): Record<string, unknown> {
  const { icon: _old, ...rest } = current;
  return icon === null ? rest : { ...rest, icon };
}
