import { useState } from 'preact/hooks';
import { enc } from '../api';
import { ErrorBox, plural, useAction } from '../ui';
import { errorOf, hub } from '../host/hub';
import { hostHref } from '../host/host-route';
import { projectList, projectsById } from '../host/projects-store';
import { ConfigEditor } from './ConfigEditor';
import { OnlineChip, ProjectIcon, StartButton } from './Projects';
import { HarnessSelect } from '../host/HarnessSelect';
import { Transcript } from './Transcript';

/**
 * One project on the host (`#/projects/<id>`): start its backend, run `trellis doctor` or `trellis init`
 * (with a harness) in it and read the transcript, and edit its committed `trellis.json`.
 */
export function ProjectView({ id }: { id: string }) {
  const p = projectsById.value.get(id);
  const [harness, setHarness] = useState('');
  const action = useAction();
  const busy = action.doing || null;
  const error = action.error;
  const [out, setOut] = useState<{ text: string; exitCode?: number } | null>(null);
  if (!p) {
    return projectList.value ? (
      <div class="card">
        <h1>No such project</h1>
        <p>
          No project <code>{id}</code> is registered or running on this host. Back to the <a href={hostHref.projects()}>projects</a>.
        </p>
      </div>
    ) : (
      <p class="muted">Loading…</p>
    );
  }
  const run = async (verb: 'doctor' | 'init') => {
    setOut(null);
    await action.run(async () => {
      const a = await hub<{ exitCode: number; transcript: string }>('POST', `projects/${enc(p.id)}/${verb}`, verb === 'init' && harness ? { harness } : {});
      if (a.status !== 200) throw errorOf(a, verb);
      setOut({ text: a.body.transcript, exitCode: a.body.exitCode });
    }, verb);
  };
  return (
    <>
      <div class="page-head">
        <div class="crumbs">
          <a href={hostHref.projects()}>Projects</a> /
        </div>
        <h1 class="project-title">
          <ProjectIcon p={p} /> {p.name} <OnlineChip p={p} />
        </h1>
        <p class="muted">
          <code>{p.root}</code>
          {p.online ? ` · ${plural(p.openIssues ?? 0, 'open issue')} · ${plural(p.liveSessions ?? 0, 'live session')}` : p.reason ? ` · ${p.reason}` : ''}
        </p>
      </div>
      <section class="card" aria-labelledby="ops-h">
        <h2 id="ops-h">Run</h2>
        <div class="toolbar">
          {p.online ? (
            <a class="button primary" href={p.url}>
              Open the board
            </a>
          ) : (
            <StartButton p={p} onTranscript={(t) => setOut({ text: t })} />
          )}
          <button class="button" type="button" onClick={() => run('doctor')} disabled={!!busy}>
            {busy === 'doctor' ? 'Running doctor…' : 'Run doctor'}
          </button>
          <label>
            <span>Harness for init</span>
            <HarnessSelect value={harness} onChange={setHarness} blank="(keep as is)" />
          </label>
          <button class="button" type="button" onClick={() => run('init')} disabled={!!busy}>
            {busy === 'init' ? 'Running init…' : 'Run init'}
          </button>
        </div>
        <ErrorBox error={error} />
        {out ? <Transcript text={out.text} {...(out.exitCode !== undefined ? { exitCode: out.exitCode } : {})} /> : null}
      </section>
      <ConfigEditor id={p.id} />
    </>
  );
}
