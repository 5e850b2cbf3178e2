/**
 * The wait → state table `npm run bench -- agents` ends with: one row per agent and wait it measured (p95
 * against the 500 ms target, how many runs reached the right state), and the Codex protocol event's CPU
 * against its 5 ms. Rows are added as each figure is reported; printed once, after every figure.
 */
/** Issue 41's targets: a wait on screen → the session saying it, p95; a Codex event over the protocol, Trellis CPU. */
export const WAIT_P95_TARGET_MS = 500;
export const PROTOCOL_EVENT_CPU_TARGET_MS = 5;

interface Row {
  readonly name: string;
  readonly figure: number | null;
  readonly unit: string;
  /** null: a figure shown beside the others, no target of Trellis's (the agent's own time). */
  readonly target: number | null;
  readonly reached: string;
  readonly load: number;
}

const rows: Row[] = [];

/** A wait's row: its p95 (null when no run reached the right state). */
export function waitRow(name: string, expect: string, p95: number | null, reached: number, runs: number, load: number): void {
  rows.push({ name: `${name} → ${expect}`, figure: p95, unit: 'ms p95', target: WAIT_P95_TARGET_MS, reached: `${reached}/${runs}`, load });
}

/** A wait's split, shown beside it: `part`'s p95 in the runs where a hook recorded the state (Trellis's part is held to the target; the agent's is not). */
export function splitRow(name: string, part: string, p95: number, n: number, runs: number, load: number, targeted: boolean): void {
  rows.push({ name: `${name} (${part})`, figure: p95, unit: 'ms p95', target: targeted ? WAIT_P95_TARGET_MS : null, reached: `${n}/${runs}`, load });
}

/** The Codex protocol event's row: Trellis CPU per recorded event (the median turn's). */
export function cpuRow(name: string, cpuMs: number, load: number): void {
  rows.push({ name, figure: cpuMs, unit: 'ms CPU/event', target: PROTOCOL_EVENT_CPU_TARGET_MS, reached: '-', load });
}

/** The table, as text (and each row's verdict): what the run ends with. */
export function printTable(): void {
  if (!rows.length) return;
  const width = Math.max(...rows.map((r) => r.name.length));
  const lines = rows.map((r) => {
    const verdict = r.target === null ? '(the agent’s)' : r.figure === null ? 'MISSED (never reached)' : r.figure <= r.target ? 'ok' : 'MISSED';
    const figure = r.figure === null ? '-' : String(r.figure);
    return `${r.name.padEnd(width)}  ${figure.padStart(8)} ${r.unit.padEnd(13)} target ${r.target === null ? '-   ' : `≤ ${String(r.target).padEnd(4)}`} runs ${r.reached.padEnd(5)} load ${r.load}  ${verdict}`;
  });
  process.stdout.write(`\nagents: wait → state and protocol CPU\n${lines.join('\n')}\n`);
}
