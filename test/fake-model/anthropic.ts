import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Turn } from './replies.js';
import { delay, sse, type RouteContext } from './server.js';

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

const ERRORS: Record<number, [string, string]> = {
  400: ['invalid_request_error', 'The fake model refuses this request'],
  401: ['authentication_error', 'invalid x-api-key'],
  429: ['rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'],
  500: ['api_error', 'Internal server error'],
  529: ['overloaded_error', 'Overloaded'],
};

const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});

/** The latest user message: its text, and whether it carries tool results (with the ids they answer). */
function lastUser(body: Record<string, unknown>): { text: string; toolResults: string[] } {
  // Claude Code also sends `system` role entries (agent and skill lists) after the user's message.
  const messages = (Array.isArray(body.messages) ? body.messages : []).map(obj).filter((m) => m.role === 'user' || m.role === 'assistant');
  const last = messages[messages.length - 1] ?? {};
  if (last.role !== 'user') return { text: '', toolResults: [] };
  if (typeof last.content === 'string') return { text: last.content, toolResults: [] };
  const blocks = Array.isArray(last.content) ? last.content.map(obj) : [];
  const toolResults = blocks.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id));
  // Claude Code puts <system-reminder> blocks beside the user's own text.
  const text = blocks
    .filter((b) => b.type === 'text' && typeof b.text === 'string' && !(b.text as string).startsWith('<system-reminder>'))
    .map((b) => b.text as string)
    .join('\n');
  return { text, toolResults };
}

/**
 * Anthropic's Messages API, the subset Claude Code calls: `POST /v1/messages` (streaming or not) and
 * `POST /v1/messages/count_tokens`. A request offering tools is the agent's conversation; one without
 * tools is a side call of its own (a title, a topic check, a quota probe) and gets a short text.
 */
export async function anthropicRoute(method: string, path: string, rawBody: unknown, res: ServerResponse, ctx: RouteContext): Promise<boolean> {
  if (method !== 'POST' || !path.startsWith('/v1/messages')) return false;
  const body = obj(rawBody);
  if (path === '/v1/messages/count_tokens') {
    ctx.seen({ api: 'anthropic', path, kind: 'side', userText: '', body, status: 200 });
    json(res, 200, { input_tokens: 42 });
    return true;
  }
  const tools = Array.isArray(body.tools) ? body.tools.map(obj) : [];
  const { text, toolResults } = lastUser(body);
  const model = ctx.answerModel() ?? (typeof body.model === 'string' ? body.model : 'claude-fake');
  let turn: Turn;
  let kind: 'turn' | 'tool-result' | 'side';
  if (toolResults.length) {
    kind = 'tool-result';
    turn = { text: toolResults.map((id) => ctx.afterTool.get(id)).find(Boolean) ?? 'Done.' };
  } else if (tools.length && text) {
    kind = 'turn';
    turn = ctx.nextTurn(text);
  } else {
    kind = 'side';
    turn = { text: sideAnswer(body), delayMs: ctx.sideDelay() };
  }
  // Seen on arrival, answered after any delay.
  ctx.seen({ api: 'anthropic', path, kind, userText: text, body, status: 'status' in turn ? turn.status : 200 });
  await delay(turn.delayMs);
  if ('until' in turn) await turn.until;
  if ('status' in turn) {
    const [type, message] = ERRORS[turn.status]!;
    json(res, turn.status, { type: 'error', error: { type, message } }, turn.status === 429 || turn.status === 529 ? { 'retry-after': '0' } : {});
    return true;
  }
  const blocks: Block[] = [];
  if ('text' in turn) blocks.push({ type: 'text', text: turn.text });
  else if ('tool' in turn) {
    const id = `toolu_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    ctx.afterTool.set(id, turn.after ?? 'Done.');
    if (turn.tool === 'bash' && turn.say) blocks.push({ type: 'text', text: turn.say });
    if (turn.tool === 'task') throw new Error('fake model: the task tool is scripted for opencode only');
    if (turn.tool === 'bash') blocks.push({ type: 'tool_use', id, name: 'Bash', input: { command: turn.command, description: 'Run the scripted command' } });
    else {
      blocks.push({
        type: 'tool_use',
        id,
        name: 'AskUserQuestion',
        input: { questions: [{ question: turn.question, header: 'Question', multiSelect: false, options: turn.options.map((label) => ({ label, description: label })) }] },
      });
    }
  }
  const stop = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const id = `msg_${randomUUID().replace(/-/g, '')}`;
  const u = ctx.nextUsage('anthropic', kind, model, id);
  const final = { input_tokens: u.input, output_tokens: u.output, cache_creation_input_tokens: u.cacheWrite, cache_read_input_tokens: u.cacheRead };
  // As Anthropic streams it: message_start carries the input counts and a placeholder output count (1);
  // the final output count comes in message_delta at the end.
  const message = { id, type: 'message', role: 'assistant', model, content: [] as Block[], stop_reason: null, stop_sequence: null, usage: { ...final, output_tokens: 1 } };
  if (body.stream !== true) {
    json(res, 200, { ...message, content: blocks, stop_reason: stop, usage: final });
    return true;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  sse(res, 'message_start', { type: 'message_start', message });
  if ('hang' in turn) {
    ctx.held.add(res);
    res.on('close', () => ctx.held.delete(res));
    sse(res, 'ping', { type: 'ping' });
    return true;
  }
  blocks.forEach((b, index) => {
    if (b.type === 'text') {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } });
    } else {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } });
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index });
  });
  sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: final });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
  return true;
}

/** A sane short answer to a side call: JSON where the call asks for JSON (a title or topic check), else text. */
function sideAnswer(body: Record<string, unknown>): string {
  const system = JSON.stringify(body.system ?? '');
  if (/isNewTopic/.test(system)) return '{"isNewTopic": false, "title": null}';
  if (/json/i.test(system)) return '{"title": "Fake title"}';
  return 'Fake title';
}

function json(res: ServerResponse, status: number, data: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(data));
}
