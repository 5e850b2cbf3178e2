import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { get } from '../../api';

/** `GET /api/harnesses`: what "project default" means on the server's machine, and which agents are there. */
interface HarnessMenu {
  readonly configured: string | null;
  readonly resolved: string;
  readonly installed: boolean;
  readonly harnesses: readonly { readonly name: string; readonly installed: boolean }[];
}

const menu = signal<HarnessMenu | null>(null);

/** What the default is, in words: which harness, and why that one. */
function defaultWords(m: HarnessMenu): string {
  if (!m.installed) return `This project's default, ${m.resolved}, is not installed on this machine, so it cannot start here; ${m.harnesses.find((h) => h.installed)?.name ?? 'shell'} is picked instead.`;
  if (m.configured === 'auto') {
    return m.resolved === 'shell'
      ? 'Default here: shell (a terminal you type into yourself). The project asks for the first installed agent, and none is installed on this machine.'
      : `Default here: ${m.resolved}, the first agent installed on this machine.`;
  }
  return m.configured ? `Default: ${m.resolved}, as the project's settings say.` : 'Default: shell (a terminal you type into yourself); the project names no agent.';
}

/**
 * The spawn form's harness: "project default" names the harness it stands for, and a harness whose agent
 * is not installed is shown but cannot be picked (a spawn with it could only fail). When the default itself
 * is not installed, the first installed harness is picked instead.
 */
export function HarnessPicker({ value, onChange, fallback }: { value: string; onChange: (h: string) => void; fallback: readonly string[] }) {
  // Asked on each visit: an agent installed (or trellis.json edited) since then shows without a reload.
  useEffect(() => {
    get<HarnessMenu>('api/harnesses').then(
      (m) => (menu.value = m),
      () => {},
    );
  }, []);
  const m = menu.value;
  useEffect(() => {
    if (m && !m.installed && value === '') onChange(m.harnesses.find((h) => h.installed)?.name ?? 'shell');
  }, [m, value]);
  const list = m?.harnesses ?? fallback.map((name) => ({ name, installed: true }));
  return (
    <label>
      <span>Harness</span>
      <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)} aria-describedby="harness-default">
        <option value="" disabled={m ? !m.installed : false}>
          {m ? `project default: ${m.resolved}${m.installed ? '' : ' (not installed)'}` : 'project default'}
        </option>
        {list.map((h) => (
          <option key={h.name} value={h.name} disabled={!h.installed}>
            {h.installed ? h.name : `${h.name} (not installed)`}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The sentence under the spawn form's fields: which harness "project default" is here, and why. */
export function HarnessDefaultNote() {
  const m = menu.value;
  return m ? (
    <p id="harness-default" class="muted harness-default" data-testid="harness-default">
      {defaultWords(m)}
    </p>
  ) : null;
}
