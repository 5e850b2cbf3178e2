import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicRoute } from './anthropic.js';
import { geminiRoute } from './gemini.js';
import { openaiChatRoute } from './openai-chat.js';
import { openaiRoute } from './openai.js';
import { turnFromText, type SeenRequest, type Turn } from './replies.js';

/**
 * A local stand-in for the model providers (no provider is reachable here), speaking the subset the real
 * agent programs call: Anthropic's Messages API with streaming (claude, via `ANTHROPIC_BASE_URL`) and
 * OpenAI's Responses API with streaming (codex, via a custom model provider) and OpenAI's Chat Completions
 * with streaming (opencode, via a custom `@ai-sdk/openai-compatible` provider), and Google's Gemini API
 * (Gemini CLI, via `GOOGLE_GEMINI_BASE_URL`). Each user turn of the
 * agent's own conversation takes the next scripted `Turn`; with none scripted, directives in the user's
 * text choose (see `turnFromText`), else a plain echo. Calls the agents make on their own (title
 * generation, quota probes, token counts, model lists) get a sane answer and consume nothing.
 */
export interface FakeModel {
  /** `http://127.0.0.1:<port>`: claude's `ANTHROPIC_BASE_URL`; codex's provider base is `${url}/v1`. */
  readonly url: string;
  /** Queues turns for the next user turns, in order (shared by both APIs). */
  script(...turns: Turn[]): void;
  /** Drops the turns scripted and not yet taken (an agent stopped before it asked). */
  clearScript(): void;
  /** Holds every side call's answer back this long (0: none), to order a side thread after the turn. */
  sideDelayMs: number;
  /** Every request seen, oldest first. */
  readonly requests: readonly SeenRequest[];
  /**
   * The usage of every answer the fake streamed, oldest first: each distinct and known (`usageFor(n)`
   * for the nth answer), with the kind of request it answered (`side` calls are the agent's own, outside its conversation).
   */
  readonly answered: readonly AnsweredUsage[];
  /** The model name claude's and codex's answers name (default: what the request asked for). */
  answerModel: string | null;
  /** The turns of the agents' own conversations (kind `turn`), oldest first. */
  turns(): SeenRequest[];
  /** Requests whose answer is still being written (held `hang` streams included). */
  inFlight(): number;
  close(): Promise<void>;
}

/** What a route needs from the server: the next turn for a user text, and a place to keep state. */
export interface RouteContext {
  nextTurn(userText: string): Turn;
  /** How long a side call's answer is held back. */
  sideDelay(): number;
  /** The `after` text of a tool call, by its call id, for the request that carries its result. */
  readonly afterTool: Map<string, string>;
  /** Streams held open (`hang`), ended when the server closes. */
  readonly held: Set<ServerResponse>;
  seen(r: Omit<SeenRequest, 'headers'>): void;
  /** The usage of the next answer (distinct for every answer), recorded with what it answered. */
  nextUsage(api: 'anthropic' | 'openai', kind: SeenRequest['kind'], model: string, id: string): FakeUsage;
  /** The model name answers carry instead of the one requested, or null. */
  answerModel(): string | null;
}

/** The tokens of one answer, as Anthropic counts them (input excludes the cache reads and writes). */
export interface FakeUsage {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
}

export interface AnsweredUsage extends FakeUsage {
  readonly api: 'anthropic' | 'openai';
  readonly kind: SeenRequest['kind'];
  readonly model: string;
  /** The answer's message or response id. */
  readonly id: string;
}

/** The nth answer's usage (1-based): distinct in every field and every answer, so a double count or a lost answer shows. */
export const usageFor = (n: number): FakeUsage => ({ input: 1000 + n, output: 200 + 3 * n, cacheRead: 5000 + 7 * n, cacheWrite: 300 + 11 * n });

export async function startFakeModel(opts: { port?: number } = {}): Promise<FakeModel> {
  const queue: Turn[] = [];
  const requests: SeenRequest[] = [];
  const answered: AnsweredUsage[] = [];
  const ctx: RouteContext = {
    nextTurn: (text) => queue.shift() ?? turnFromText(text),
    sideDelay: () => fake.sideDelayMs,
    afterTool: new Map(),
    held: new Set(),
    seen: (r) => requests.push(r as SeenRequest),
    nextUsage: (api, kind, model, id) => {
      const n = usageFor(answered.length + 1);
      // OpenAI's usage has no cache writes.
      const usage = api === 'openai' ? { ...n, cacheWrite: 0 } : n;
      answered.push({ api, kind, model, id, ...usage });
      return usage;
    },
    answerModel: () => fake.answerModel,
  };
  let open = 0;
  const server: Server = createServer((req, res) => {
    open++;
    res.on('close', () => open--);
    void handle(req, res, ctx).catch((err: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake model: ${err.message}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: FakeModel = {
    sideDelayMs: 0,
    url: `http://127.0.0.1:${port}`,
    script: (...turns) => void queue.push(...turns),
    clearScript: () => void queue.splice(0),
    requests,
    answered,
    answerModel: null,
    turns: () => requests.filter((r) => r.kind === 'turn'),
    inFlight: () => open,
    close: async () => {
      for (const res of ctx.held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

async function handle(req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  let body: unknown = null;
  try {
    body = raw ? JSON.parse(raw) : null;
  } catch {
    body = raw;
  }
  const path = (req.url ?? '/').split('?')[0]!;
  // Each record of this request carries its headers.
  ctx = { ...ctx, seen: withHeaders(ctx.seen, req) };
  if (path === '/') {
    // Claude Code probes the base URL's reachability at start.
    ctx.seen({ api: 'anthropic', path, kind: 'side', userText: '', body, status: 200 });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
    return;
  }
  if (await anthropicRoute(req.method ?? 'GET', path, body, res, ctx)) return;
  if (await openaiRoute(req.method ?? 'GET', path, body, res, ctx)) return;
  if (await openaiChatRoute(req.method ?? 'GET', path, body, res, ctx)) return;
  if (await geminiRoute(req.method ?? 'GET', path, body, res, ctx)) return;
  ctx.seen({ api: path.includes('/responses') ? 'openai' : 'anthropic', path, kind: 'side', userText: '', body, status: 404 });
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { type: 'not_found_error', message: `fake model: no route ${req.method} ${path}` } }));
}

const withHeaders = (seen: RouteContext['seen'], req: IncomingMessage): RouteContext['seen'] => (r) => seen({ ...r, headers: req.headers } as SeenRequest);

/** Writes one server-sent event. */
export function sse(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export const delay = (ms: number | undefined): Promise<void> => (ms ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());
