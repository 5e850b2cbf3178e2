import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Turn } from './replies.js';
import { delay, type RouteContext } from './server.js';

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});

const ERRORS: Record<number, { type: string; code: string; message: string }> = {
  400: { type: 'invalid_request_error', code: 'invalid_value', message: 'The fake model refuses this request' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided' },
  429: { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'Rate limit reached' },
  500: { type: 'server_error', code: 'server_error', message: 'The server had an error while processing your request' },
  529: { type: 'server_error', code: 'overloaded', message: 'Overloaded' },
};

/** A message's text, whether its content is a string or a list of parts. */
function textOf(m: Record<string, unknown>): string {
  if (typeof m.content === 'string') return m.content;
  return (Array.isArray(m.content) ? m.content.map(obj) : []).filter((p) => typeof p.text === 'string').map((p) => p.text as string).join('\n');
}

/** The latest message: a user's text, or the id of the tool call a `tool` message answers. */
function lastMessage(body: Record<string, unknown>): { text: string; toolResult: string | null } {
  const messages = (Array.isArray(body.messages) ? body.messages : []).map(obj);
  const last = messages[messages.length - 1] ?? {};
  if (last.role === 'tool') return { text: '', toolResult: String(last.tool_call_id ?? '') };
  if (last.role !== 'user') return { text: '', toolResult: null };
  return { text: textOf(last), toolResult: null };
}

/**
 * OpenAI's Chat Completions API, the subset opencode calls through a custom provider
 * (`@ai-sdk/openai-compatible` with a `baseURL`): `POST /v1/chat/completions`, streamed. A request
 * offering tools is the agent's conversation; one without tools is a side call of its own (opencode's
 * session title) and gets a short text.
 */
export async function openaiChatRoute(method: string, path: string, rawBody: unknown, res: ServerResponse, ctx: RouteContext): Promise<boolean> {
  if (method !== 'POST' || !/\/chat\/completions$/.test(path)) return false;
  const body = obj(rawBody);
  const tools = Array.isArray(body.tools) ? body.tools.map(obj) : [];
  const { text, toolResult } = lastMessage(body);
  let turn: Turn;
  let kind: 'turn' | 'tool-result' | 'side';
  if (toolResult !== null) {
    kind = 'tool-result';
    turn = { text: ctx.afterTool.get(toolResult) ?? 'Done.' };
  } else if (tools.length && text) {
    kind = 'turn';
    turn = ctx.nextTurn(text);
  } else {
    kind = 'side';
    turn = { text: 'Fake session title', delayMs: ctx.sideDelay() };
  }
  ctx.seen({ api: 'openai', path, kind, userText: text, body, status: 'status' in turn ? turn.status : 200 });
  await delay(turn.delayMs);
  if ('status' in turn) {
    res.writeHead(turn.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { ...ERRORS[turn.status]!, param: null } }));
    return true;
  }
  const model = typeof body.model === 'string' ? body.model : 'gpt-fake';
  const base = { id: `chatcmpl-${randomUUID().replace(/-/g, '')}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
    res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  chunk({ role: 'assistant', content: '' });
  if ('hang' in turn) {
    ctx.held.add(res);
    res.on('close', () => ctx.held.delete(res));
    return true;
  }
  // Its usage, distinct and known (the fake's `answered`), as OpenAI counts it: cached tokens inside the
  // prompt's, reasoning inside the completion's. A placeholder comes with the first content chunk, as
  // providers streaming usage on every chunk send it (vLLM's continuous usage); the last chunk's is final.
  const u = ctx.nextUsage('openai', kind, model, base.id);
  const reasoning = Math.floor(u.output / 4);
  const usage = {
    prompt_tokens: u.input + u.cacheRead,
    completion_tokens: u.output,
    total_tokens: u.input + u.cacheRead + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead },
    completion_tokens_details: { reasoning_tokens: reasoning },
  };
  const placeholder = { prompt_tokens: u.input + u.cacheRead, completion_tokens: 1, total_tokens: u.input + u.cacheRead + 1 };
  let finish: string;
  if ('text' in turn) {
    chunk({ content: turn.text }, null, { usage: placeholder });
    finish = 'stop';
  } else if ('tool' in turn && (turn.tool === 'bash' || turn.tool === 'task')) {
    const callId = `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    ctx.afterTool.set(callId, turn.after ?? 'Done.');
    const tool = tools.map((t) => obj(t.function)).find((f) => f.name === turn.tool) ?? { name: turn.tool };
    const args = JSON.stringify(
      turn.tool === 'bash' ? { command: turn.command, description: 'Run the scripted command' } : { description: 'A scripted sub-agent task', prompt: turn.prompt, subagent_type: 'general' },
    );
    chunk({ tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: tool.name, arguments: args } }] }, null, { usage: placeholder });
    finish = 'tool_calls';
  } else {
    throw new Error('fake model: opencode is scripted text, bash, task, a status or a hang');
  }
  chunk({}, finish);
  res.write(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
  res.write('data: [DONE]\n\n');
  res.end();
  return true;
}
