/**
 * What the fake model answers to one user turn, scripted by the test. A turn is one of:
 *   { text }                          plain text, the turn ends
 *   { tool: 'bash', command }         a shell tool call that asks for permission (claude: `Bash`, which
 *                                     asks outside its allow list; codex: `exec_command` with
 *                                     `sandbox_permissions: "require_escalated"`, which always asks); once
 *                                     the agent sends the tool's result back the model answers `after`
 *                                     (default "Done.") and the turn ends; `say`: a text block before the
                                     call in the same message (claude: two transcript lines of one id)
 *   { tool: 'ask', question, options } claude's `AskUserQuestion` tool call (codex is sent
 *                                     `request_user_input`, which it refuses outside plan mode)
 *   { tool: 'task', prompt }          opencode's `task` tool call: a sub-agent (`general`) is given `prompt`
 *                                     in a child session of its own (whose turn takes the next reply);
 *                                     its result sent back, the model answers `after` (opencode only)
 *   { status: 400 | 401 | 429 | 500 | 529 } the provider refuses the request with that HTTP status (400: a
 *                                     request it will never take, which no agent retries)
 *   { hang: true }                    the response starts and never finishes (a turn still running;
 *                                     released when the server closes)
 * A `delayMs` on any of them holds the answer back that long first; `until` on a text turn holds it until
 * that promise settles (a turn that runs exactly as long as the test needs it to, not a guessed delay).
 */
export type Turn =
  | { readonly text: string; readonly delayMs?: number; readonly until?: Promise<unknown> }
  | { readonly tool: 'bash'; readonly command: string; readonly after?: string; readonly delayMs?: number; readonly say?: string }
  | { readonly tool: 'ask'; readonly question: string; readonly options: readonly string[]; readonly after?: string; readonly delayMs?: number }
  | { readonly tool: 'task'; readonly prompt: string; readonly after?: string; readonly delayMs?: number }
  | { readonly status: 400 | 401 | 429 | 500 | 529; readonly delayMs?: number }
  | { readonly hang: true; readonly delayMs?: number };

/** What a request was, as the fake saw it (for assertions and for telling turns from side calls). */
export interface SeenRequest {
  readonly api: 'anthropic' | 'openai' | 'gemini';
  readonly path: string;
  /**
   * `turn`: a user turn of the agent's own conversation (it consumed a scripted reply);
   * `tool-result`: the agent sent a tool's result back; `side`: a call the agent makes on its own
   * (title generation, quota probe, token count, model list).
   */
  readonly kind: 'turn' | 'tool-result' | 'side';
  /** The text of the latest user message (for a turn), or ''. */
  readonly userText: string;
  readonly body: unknown;
  /** The request's headers (codex names its conversation in `session_id`). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly status: number;
}

/** A turn from directives in the user's own text, when the test scripted none: `[fake:bash <cmd>]`, `[fake:task <prompt>]`, `[fake:ask]`, `[fake:status 400|401|…]`, `[fake:hang]`. */
export function turnFromText(text: string): Turn {
  const bash = /\[fake:bash ([^\]]+)\]/.exec(text);
  if (bash) return { tool: 'bash', command: bash[1]! };
  const task = /\[fake:task ([^\]]+)\]/.exec(text);
  if (task) return { tool: 'task', prompt: task[1]!, after: 'The sub-agent is done.' };
  if (text.includes('[fake:ask]')) return { tool: 'ask', question: 'Which color?', options: ['Red', 'Blue'] };
  const status = /\[fake:status (400|401|429|500|529)\]/.exec(text);
  if (status) return { status: Number(status[1]) as 400 | 401 | 429 | 500 | 529 };
  if (text.includes('[fake:hang]')) return { hang: true };
  return { text: `Fake reply to: ${text.slice(0, 60).replace(/\s+/g, ' ')}` };
}
