import { isObject } from '../../events/stored-json.js';
import { compareKeys, keyOf, threadEventProblem, TrellisError, type ThreadEvent } from '../../events/index.js';
import type { IssuesProject } from './issues-project.js';
import { isLocalId } from '../project/ids.js';

/**
 * `trellis issues export`: every issue thread's events as NDJSON, one `{"stream","event"}` line each (the
 * shape of fixtures/events/*.ndjson), the event exactly as stored. Lines are ordered by (at, stream,
 * clock, id), so a recorded log round-trips byte for byte. Eval-remark threads only with `all`.
 */
export async function exportThreads(p: IssuesProject, opts: { all?: boolean } = {}): Promise<string> {
  const events = await p.threads.events((state) => opts.all === true || state.scope === undefined);
  events.sort((a, b) => {
    if (a.event.at !== b.event.at) return a.event.at < b.event.at ? -1 : 1;
    if (a.id !== b.id) return a.id < b.id ? -1 : 1;
    return compareKeys(keyOf(a.event), keyOf(b.event)); // within one stream and instant: the fold order
  });
  const lines: string[] = [];
  for (const { id, text } of events) lines.push(`{"stream":${JSON.stringify(id)},"event":${text}}\n`);
  return lines.join('');
}

/**
 * `trellis issues import`: reads NDJSON as `exportThreads` writes it and appends the events each thread
 * does not hold yet (by event key: clock, at, id), so importing twice adds nothing. The whole input is
 * checked first: a line that does not parse is reported with its number and nothing is written.
 */
export async function importThreads(p: IssuesProject, text: string): Promise<{ streams: number; events: number; lines: number }> {
  const streams = parseNdjson(text);
  const result = await p.threads.importEvents(streams.byStream);
  return { ...result, lines: streams.lines };
}

function parseNdjson(text: string): { byStream: Map<string, ThreadEvent[]>; lines: number } {
  const byStream = new Map<string, ThreadEvent[]>();
  let lines = 0;
  const rows = text.split('\n');
  rows.forEach((row, i) => {
    if (row.trim() === '') return;
    const at = `line ${i + 1}`;
    let raw: unknown;
    try {
      raw = JSON.parse(row);
    } catch (err) {
      throw invalid(`${at} is not JSON (${(err as Error).message})${i === rows.length - 1 ? '; the file looks truncated' : ''}`);
    }
    if (!isObject(raw) || typeof raw.stream !== 'string' || !isObject(raw.event)) throw invalid(`${at} is not {"stream": <thread id>, "event": {...}}`);
    if (!isLocalId(raw.stream)) throw invalid(`${at} names ${JSON.stringify(raw.stream)}, which is not a local thread id`);
    const problem = threadEventProblem(raw.event);
    if (problem !== null) throw invalid(`${at}: the event ${problem}`);
    const event = raw.event as unknown as ThreadEvent;
    const list = byStream.get(raw.stream);
    if (list) list.push(event);
    else byStream.set(raw.stream, [event]);
    lines++;
  });
  return { byStream, lines };
}

const invalid = (message: string) => new TrellisError('INVALID_INPUT', `${message}; nothing was imported`);
