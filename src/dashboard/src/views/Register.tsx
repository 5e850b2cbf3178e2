import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, onListKeys, useFetch, FolderIcon, useAction } from '../ui';
import { errorOf, hub } from '../host/hub';
import { hostHref, hostRoute } from '../host/host-route';
import { projectList, type ProjectRow } from '../host/projects-store';
import { HarnessSelect } from '../host/HarnessSelect';
import { Transcript } from './Transcript';

interface Folder {
  readonly name: string;
  readonly path: string;
  readonly symlink?: string;
  readonly git?: boolean;
  readonly trellis?: boolean;
}
interface Listing {
  readonly path: string;
  readonly parent: string | null;
  readonly folders: readonly Folder[];
}

async function browse(path: string | null): Promise<Listing> {
  const a = await hub<Listing>('GET', `fs${path ? `?path=${encodeURIComponent(path)}` : ''}`);
  if (a.status !== 200) throw errorOf(a, 'GET /fs');
  return a.body;
}

/**
 * Registering a folder: browse this machine's folders (`/fs`, names and markers only), pick one, say
 * explicitly whether a plain folder gets `git init`, and optionally run `trellis init` with a harness.
 * The steps' transcript is shown whatever happened.
 */
export function RegisterView() {
  const path = hostRoute.value.query.get('path');
  const listing = useFetch(() => browse(path), [path]);
  // A path that cannot be listed shows its refusal alone: never the folder listed before it, whose
  // Register button would register that other folder.
  const here = listing.error ? undefined : listing.data;
  const [result, setResult] = useState<{ transcript: string; project?: ProjectRow } | null>(null);
  // The folder's own markers come from its parent's listing (a listing marks its children only).
  const self = useFetch(async () => (here?.parent ? (await browse(here.parent)).folders.find((f) => f.path === here.path) ?? null : null), [here?.path, result?.project?.id]);
  const [typed, setTyped] = useState('');
  const [gitInit, setGitInit] = useState(false);
  const [init, setInit] = useState(true);
  // `auto` by default: the first agent installed at each spawn, else shell (what a newcomer wants).
  const [harness, setHarness] = useState('auto');
  const { busy, error, setError, run } = useAction();
  // The box shows the folder listed, or what was asked for when it cannot be listed (the person's typing stays).
  useEffect(() => setTyped(path ?? ''), [path]);
  useEffect(() => {
    if (here) setTyped(here.path);
    setGitInit(false);
    setResult(null);
    setError(null);
  }, [here?.path]);
  const isGit = !!self.data?.git;
  const isTrellis = !!self.data?.trellis;
  // Registered already (just now, or before): the card says so and links to it instead of offering Register again.
  const registered = result?.project ?? projectList.value?.projects.find((p) => p.cataloged && p.root === here?.path);
  useEffect(() => setInit(!isTrellis), [isTrellis, here?.path]);

  const register = async (e: Event) => {
    e.preventDefault();
    if (!here) return;
    setResult(null);
    await run(async () => {
      const a = await hub<{ project?: ProjectRow; transcript?: string }>('POST', 'projects', {
        path: here.path,
        ...(gitInit ? { gitInit: true } : {}),
        ...(init ? { init: harness ? { harness } : {} } : {}),
      });
      if (a.status === 201) setResult({ transcript: a.body.transcript ?? '', ...(a.body.project ? { project: a.body.project } : {}) });
      else {
        if (a.body?.transcript) setResult({ transcript: a.body.transcript });
        throw errorOf(a, 'registering');
      }
    });
  };

  return (
    <>
      <div class="page-head">
        <div class="crumbs">
          <a href={hostHref.projects()}>Projects</a> /
        </div>
        <h1>Register a folder</h1>
      </div>
      <section class="card" aria-labelledby="browse-h">
        <h2 id="browse-h">Choose a folder</h2>
        <form
          class="toolbar"
          onSubmit={(e) => {
            e.preventDefault();
            location.hash = hostHref.register(typed.trim());
          }}
        >
          <label class="grow">
            <span>Folder path</span>
            <input value={typed} onInput={(e) => setTyped((e.currentTarget as HTMLInputElement).value)} spellcheck={false} />
          </label>
          <button class="button" type="submit">
            Go
          </button>
        </form>
        <ErrorBox error={listing.error} action="browse" title="That folder cannot be listed">
          <a href={hostHref.register()}>Start again from your home folder</a>
        </ErrorBox>
        {here ? (
          <ul class="list folders" aria-label={`Folders in ${here.path}`} onKeyDown={onListKeys}>
            {here.parent ? (
              <li>
                <a data-nav href={hostHref.register(here.parent)}>
                  ↑ .. <span class="muted">(up to {here.parent})</span>
                </a>
              </li>
            ) : null}
            {here.folders.map((f) => (
              <li key={f.path}>
                {f.symlink ? (
                  <span class="muted" title="symlinks are not followed">
                    {f.name} → {f.symlink}
                  </span>
                ) : (
                  <a data-nav href={hostHref.register(f.path)} data-testid={`folder-${f.name}`}>
                    <FolderIcon /> {f.name}
                    {f.git ? <span class="chip">git</span> : null}
                    {f.trellis ? <span class="chip spec-status">trellis</span> : null}
                  </a>
                )}
              </li>
            ))}
            {here.folders.length === 0 ? <li class="muted">No sub-folders.</li> : null}
          </ul>
        ) : listing.loading ? (
          <p class="muted">Listing…</p>
        ) : null}
      </section>
      {here ? (
        <section class="card" aria-labelledby="register-h">
          <h2 id="register-h">
            {registered ? 'Registered' : 'Register'} <code>{here.path}</code>
          </h2>
          {registered ? (
            <div class="stack" role="status" data-testid="registered">
              <p>
                {result?.project ? 'Registered' : 'Already registered'} as <a href={hostHref.project(registered.id)}>{registered.name}</a>. It is on the{' '}
                <a href={hostHref.projects()}>projects page</a>.
              </p>
              <div class="actions">
                <a class="button primary" href={hostHref.project(registered.id)}>
                  Open {registered.name}
                </a>
                {here.parent ? (
                  <a class="button" href={hostHref.register(here.parent)}>
                    Register another folder
                  </a>
                ) : null}
              </div>
            </div>
          ) : (
            <form onSubmit={register} class="stack">
              <p class="muted" data-testid="folder-kind">
                {self.loading && !self.data ? 'Looking at the folder…' : isTrellis ? 'A git repository with a trellis.json.' : isGit ? 'A git repository (no trellis.json yet).' : 'Not a git repository itself (a plain folder, or a folder inside a repository: then its repository is registered).'}
              </p>
              {!isGit ? (
                <label class="check">
                  <input type="checkbox" checked={gitInit} onChange={(e) => setGitInit((e.currentTarget as HTMLInputElement).checked)} />
                  Create a git repository here (<code>git init</code>) if it is a plain folder
                </label>
              ) : null}
              <label class="check">
                <input type="checkbox" checked={init} onChange={(e) => setInit((e.currentTarget as HTMLInputElement).checked)} />
                Set it up as a Trellis project (adds a trellis.json)
              </label>
              {init ? (
                <label>
                  <span>Harness for its agent sessions</span>
                  <HarnessSelect value={harness} onChange={setHarness} blank="(none: decide later)" />
                </label>
              ) : null}
              <div class="actions">
                <button class="button primary" type="submit" disabled={busy}>
                  {busy ? 'Registering…' : 'Register'}
                </button>
              </div>
            </form>
          )}
          <ErrorBox error={error} action="register" title="Not registered" />
          {result ? <Transcript text={result.transcript} /> : null}
        </section>
      ) : null}
    </>
  );
}
