import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Turn } from './replies.js';
import { delay, type RouteContext } from './server.js';

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});

/** Google's error bodies (`google.rpc.Status`), as the Gemini API sends them. */
const ERRORS: Record<number, { message: string; status: string }> = {
  400: { message: 'The fake model refuses this request', status: 'INVALID_ARGUMENT' },
  401: { message: 'API key not valid. Please pass a valid API key.', status: 'UNAUTHENTICATED' },
  429: { message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' },
  500: { message: 'Internal error encountered.', status: 'INTERNAL' },
  529: { message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' },
};

/** The newest content of the request: the user's text (its last text part), or the name of the function a `functionResponse` answers. */
function lastContent(body: Record<string, unknown>): { text: string; toolResult: string | null } {
  const contents = (Array.isArray(body.contents) ? body.contents : []).map(obj);
  const last = contents[contents.length - 1] ?? {};
  const parts = (Array.isArray(last.parts) ? last.parts : []).map(obj);
  const answered = parts.map((p) => obj(p.functionResponse)).find((r) => typeof r.name === 'string');
  if (answered) return { text: '', toolResult: String(answered.name) };
  if (last.role !== 'user') return { text: '', toolResult: null };
  const texts = parts.filter((p) => typeof p.text === 'string' && !p.thought).map((p) => p.text as string);
  return { text: texts.at(-1) ?? '', toolResult: null };
}

/**
 * The answer to a side call Gemini CLI makes on its own with `generateContent` (its model router's
 * complexity classifier, its next-speaker and loop checks): JSON text holding every field those ask for.
 */
const SIDE_JSON = JSON.stringify({ complexity_reasoning: 'A simple scripted task', complexity_score: 5, reasoning: 'The model answered; the user speaks next', next_speaker: 'user', model_choice: 'flash' });

/**
 * Google's Gemini API (`generativelanguage`, v1beta), the subset Gemini CLI calls when
 * `GOOGLE_GEMINI_BASE_URL` points it here with an API key: `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`
 * (the conversation, with tools: each user turn takes the next scripted `Turn`), `:generateContent` (its own
 * side calls, answered with JSON text), `:countTokens`. A `bash` turn is a `run_shell_command` function call,
 * which Gemini CLI asks about in its default approval mode; the request carrying its `functionResponse` is
 * answered with the turn's `after` text.
 */
export async function geminiRoute(method: string, path: string, rawBody: unknown, res: ServerResponse, ctx: RouteContext): Promise<boolean> {
  const m = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/.exec(path);
  if (method !== 'POST' || !m) return false;
  const [, model, verb] = m as unknown as [string, string, string];
  const body = obj(rawBody);
  if (verb === 'countTokens') {
    ctx.seen({ api: 'gemini', path, kind: 'side', userText: '', body, status: 200 });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ totalTokens: 42 }));
    return true;
  }
  const { text, toolResult } = lastContent(body);
  let turn: Turn;
  let kind: 'turn' | 'tool-result' | 'side';
  if (verb === 'generateContent') {
    kind = 'side';
    turn = { text: SIDE_JSON, delayMs: ctx.sideDelay() };
  } else if (toolResult !== null) {
    kind = 'tool-result';
    turn = { text: ctx.afterTool.get(`gemini:${toolResult}`) ?? 'Done.' };
  } else {
    kind = 'turn';
    turn = ctx.nextTurn(text);
  }
  ctx.seen({ api: 'gemini', path, kind, userText: text, body, status: 'status' in turn ? turn.status : 200 });
  await delay(turn.delayMs);
  if ('status' in turn) {
    res.writeHead(turn.status === 529 ? 503 : turn.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: turn.status === 529 ? 503 : turn.status, ...ERRORS[turn.status]! } }));
    return true;
  }
  const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };
  const response = (parts: unknown[], finishReason: string | null) => ({
    candidates: [{ content: { parts, role: 'model' }, ...(finishReason ? { finishReason } : {}), index: 0 }],
    usageMetadata,
    modelVersion: model,
    responseId: randomUUID().replace(/-/g, '').slice(0, 22),
  });
  if (verb === 'generateContent') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(response([{ text: 'text' in turn ? turn.text : SIDE_JSON }], 'STOP')));
    return true;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const event = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\r\n\r\n`);
  if ('hang' in turn) {
    // The stream opens and never finishes: a turn still running.
    res.flushHeaders();
    ctx.held.add(res);
    res.on('close', () => ctx.held.delete(res));
    return true;
  }
  if ('text' in turn) {
    event(response([{ text: turn.text }], 'STOP'));
  } else if ('tool' in turn && turn.tool === 'bash') {
    ctx.afterTool.set('gemini:run_shell_command', turn.after ?? 'Done.');
    event(response([{ functionCall: { name: 'run_shell_command', args: { command: turn.command, description: 'Run the scripted command' } } }], 'STOP'));
  } else {
    throw new Error('fake model: gemini is scripted text, bash, a status or a hang');
  }
  res.end();
  return true;
}
