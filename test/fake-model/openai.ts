import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Turn } from './replies.js';
import { delay, sse, type RouteContext } from './server.js';

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});
const id = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '')}`;

/** Codex's title-generation side thread starts its input with this (see ../shared/agents/codex-*.jsonl). */
const TITLE_PROMPT = 'Generate a concise, single-line task title';

const ERRORS: Record<number, { type: string; code: string; message: string }> = {
  400: { type: 'invalid_request_error', code: 'invalid_value', message: 'The fake model refuses this request' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided' },
  429: { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'Rate limit reached' },
  500: { type: 'server_error', code: 'server_error', message: 'The server had an error while processing your request' },
  529: { type: 'server_error', code: 'overloaded', message: 'Overloaded' },
};

/** The latest input item: a user message's text, or the call id of a tool's output. */
function lastInput(body: Record<string, unknown>): { text: string; toolResult: string | null } {
  const input = Array.isArray(body.input) ? body.input.map(obj) : [];
  const last = input[input.length - 1] ?? {};
  if (typeof last.type === 'string' && last.type.endsWith('_output')) return { text: '', toolResult: String(last.call_id ?? '') };
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i]!;
    if (item.role !== 'user') continue;
    const parts = Array.isArray(item.content) ? item.content.map(obj) : [];
    const text = typeof item.content === 'string' ? item.content : parts.filter((p) => typeof p.text === 'string').map((p) => p.text as string).join('\n');
    // Codex puts its environment context and instructions in user messages of their own.
    if (text.startsWith('<environment_context>') || text.startsWith('<user_instructions>') || text.startsWith('# AGENTS.md')) continue;
    return { text, toolResult: null };
  }
  return { text: '', toolResult: null };
}

/** The arguments of a shell tool call, shaped the way the offered tool's schema takes its command. */
function shellCall(tools: Record<string, unknown>[], command: string): { name: string; args: Record<string, unknown> } {
  const fn = tools.filter((t) => t.type === 'function' && typeof t.name === 'string');
  const tool = fn.find((t) => /^(shell|shell_command|exec_command|local_shell)$/.test(t.name as string)) ?? fn.find((t) => /shell|exec/.test(t.name as string));
  if (!tool) return { name: 'shell', args: { command: ['bash', '-lc', command] } };
  const props = obj(obj(tool.parameters).properties);
  // Asking for escalated permissions is what makes codex ask the user, whatever its sandbox allows.
  const ask = 'sandbox_permissions' in props ? { sandbox_permissions: 'require_escalated', justification: 'Run the scripted command?' } : {};
  if ('cmd' in props) return { name: tool.name as string, args: { cmd: command, ...ask } };
  if (obj(props.command).type === 'array') return { name: tool.name as string, args: { command: ['bash', '-lc', command] } };
  return { name: tool.name as string, args: { command } };
}

/**
 * OpenAI's Responses API, the subset Codex calls through a custom provider (`wire_api = "responses"`):
 * `POST /v1/responses` streamed, and `GET /v1/models`. Codex's title-generation thread is a side call.
 */
export async function openaiRoute(method: string, path: string, rawBody: unknown, res: ServerResponse, ctx: RouteContext): Promise<boolean> {
  if (method === 'GET' && /\/models$/.test(path)) {
    ctx.seen({ api: 'openai', path, kind: 'side', userText: '', body: null, status: 200 });
    json(res, 200, { object: 'list', data: [], models: [] });
    return true;
  }
  if (method !== 'POST' || !/\/responses$/.test(path)) return false;
  const body = obj(rawBody);
  const tools = Array.isArray(body.tools) ? body.tools.map(obj) : [];
  const { text, toolResult } = lastInput(body);
  let turn: Turn;
  let kind: 'turn' | 'tool-result' | 'side';
  if (toolResult !== null) {
    kind = 'tool-result';
    turn = { text: ctx.afterTool.get(toolResult) ?? 'Done.' };
  } else if (text.startsWith(TITLE_PROMPT) || !text) {
    kind = 'side';
    turn = { text: 'Fake task title', delayMs: ctx.sideDelay() };
  } else {
    kind = 'turn';
    turn = ctx.nextTurn(text);
  }
  // Seen on arrival, answered after any delay.
  ctx.seen({ api: 'openai', path, kind, userText: text, body, status: 'status' in turn ? turn.status : 200 });
  await delay(turn.delayMs);
  if ('status' in turn) {
    json(res, turn.status, { error: { ...ERRORS[turn.status]!, param: null } });
    return true;
  }
  const responseId = id('resp');
  const model = ctx.answerModel() ?? (typeof body.model === 'string' ? body.model : 'gpt-fake');
  const base = { id: responseId, object: 'response', created_at: Math.floor(Date.now() / 1000), model, status: 'in_progress', output: [] as unknown[] };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  sse(res, 'response.created', { type: 'response.created', response: base });
  if ('hang' in turn) {
    ctx.held.add(res);
    res.on('close', () => ctx.held.delete(res));
    sse(res, 'response.in_progress', { type: 'response.in_progress', response: base });
    return true;
  }
  let item: Record<string, unknown>;
  if ('text' in turn) {
    const itemId = id('msg');
    item = { type: 'message', id: itemId, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: turn.text, annotations: [] }] };
    sse(res, 'response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    sse(res, 'response.output_text.delta', { type: 'response.output_text.delta', item_id: itemId, output_index: 0, content_index: 0, delta: turn.text });
  } else if ('tool' in turn) {
    if (turn.tool === 'task') throw new Error('fake model: the task tool is scripted for opencode only');
    const callId = id('call');
    ctx.afterTool.set(callId, turn.after ?? 'Done.');
    const question = turn.tool === 'ask' ? { id: 'choice', header: 'Question', question: turn.question, options: turn.options.map((label) => ({ label, description: label })) } : null;
    const { name, args } = turn.tool === 'bash' ? shellCall(tools, turn.command) : { name: 'request_user_input', args: { questions: [question] } };
    item = { type: 'function_call', id: id('fc'), call_id: callId, name, arguments: JSON.stringify(args), status: 'completed' };
    sse(res, 'response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } });
  } else {
    throw new Error('unreachable turn');
  }
  sse(res, 'response.output_item.done', { type: 'response.output_item.done', output_index: 0, item });
  // OpenAI counts cached tokens inside input_tokens.
  const u = ctx.nextUsage('openai', kind, model, responseId);
  const usage = { input_tokens: u.input + u.cacheRead, input_tokens_details: { cached_tokens: u.cacheRead }, output_tokens: u.output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: u.input + u.cacheRead + u.output };
  sse(res, 'response.completed', { type: 'response.completed', response: { ...base, status: 'completed', output: [item], usage } });
  res.end();
  return true;
}

function json(res: ServerResponse, status: number, data: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(data));
}
