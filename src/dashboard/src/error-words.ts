/**
 * What the page says when something it asked for did not happen. The API's messages are written for the
 * CLI and the API (they name flags, routes, JSON fields and byte counts); the page speaks to a person
 * looking at it: what happened and what to click. It works from the stable code, the facts the answer
 * carried beside it (`details`) and which of the page's actions asked, never from the API's wording; only
 * a code it has no words for falls back to the API's message, with the parts that speak CLI or API
 * taken out (cleanMessage).
 */

/** Which of the page's actions met the error (the same code reads differently after each). */
export type PageAction = 'browse' | 'register' | 'spawn' | 'merge' | 'prompt' | 'reply' | 'password' | 'login' | 'save' | 'upload' | 'terminal';

export interface PageWords {
  /** What happened, in the page's words. */
  readonly message: string;
  /** What to click or do next, when there is something. */
  readonly next?: string;
  /** The text sent was too large for one message: the page offers to attach it as a file. */
  readonly attach?: boolean;
}

interface ErrorLike {
  readonly code?: string;
  readonly message?: string;
  readonly status?: number;
  readonly details?: Readonly<Record<string, unknown>>;
}

type Words = (e: ErrorLike, action: PageAction | undefined) => PageWords | undefined;

/** The page's words per code; `undefined` from one means "no words for this context": the fallback is used. */
const WORDS: Record<string, Words> = {
  NETWORK: (_e, action) =>
    action
      ? { message: 'The server did not answer, so this may or may not have been saved.', next: 'Check whether it shows on the page (it updates by itself) before trying again.' }
      : { message: 'The server did not answer.', next: 'Check that the project’s server is running; the page keeps retrying by itself.' },
  PAYLOAD_TOO_LARGE: (_e, action) =>
    action === 'prompt'
      ? { message: 'This text is too long to send as a prompt.', next: 'Attach it as a file: the agent gets a short prompt naming the file.', attach: true }
      : action === 'reply'
        ? { message: 'This text is too long to send as a reply.', next: 'Attach it as a file: the reply carries the whole text as a file.', attach: true }
        : action === 'upload'
        ? { message: 'This file is larger than this project accepts.', next: 'Send a smaller file, or raise the limit (uploads.maxBytes) in the project’s configuration.' }
        : { message: 'That is too large to send in one go.' },
  HARNESS_NOT_INSTALLED: (e) => {
    const harness = str(e.details?.harness);
    const program = str(e.details?.program);
    if (!harness || !program) return undefined;
    return {
      message: `The ${harness} agent (${program}) is not installed on this machine, so no session was started.`,
      next: `Pick another harness in the form (shell is always there), or install ${program} on the machine and spawn again.`,
    };
  },
  MERGE_BLOCKED: (e) => {
    const blocking = Array.isArray(e.details?.blocking) ? (e.details.blocking as { scenario?: unknown; blocks?: unknown }[]) : [];
    const list = blocking.map((b) => `${str(b.scenario) ?? '?'}${str(b.blocks) ? ` (${str(b.blocks)})` : ''}`).join('; ');
    return {
      message: `The checks hold this merge back${list ? `: ${list}` : ''}.`,
      next: `Click Run checks to measure them at the session’s latest commit${e.details?.changed === true ? ', accept a changed check in the review below' : ''}, or write why it should go in anyway under “Merge anyway, because” and click Merge again.`,
    };
  },
  SESSION_REFUSED: (e) => {
    const dirty = Array.isArray(e.details?.uncommitted) ? (e.details.uncommitted as unknown[]).filter((x): x is string => typeof x === 'string') : [];
    if (!dirty.length) return undefined;
    const named = `${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? ` and ${dirty.length - 5} more` : ''}`;
    return {
      message: `The session’s folder has uncommitted changes (${named}), and the checks measure its last commit.`,
      next: 'Ask the agent to commit them (Send a prompt), then click Run checks again.',
    };
  },
  NOT_FOUND: (e, action) => (action === 'browse' ? { message: 'There is no folder at that path.', next: 'Check the path, or go up to a folder that exists and pick it from the list.' } : { message: cleanMessage(e.message ?? '') }),
  SERVE_FAILED: (e) => (str(e.details?.logTail) ? { message: 'The project’s server did not start.', next: 'The last lines of its log, below, say why.' } : undefined),
  SELF_APPROVAL: () => ({ message: 'A session cannot approve its own merge or checks.', next: 'A person has to decide this: log in as yourself, not as the session’s agent.' }),
  BAD_PASSWORD: (_e, action) => (action === 'password' ? { message: 'The current password is wrong; nothing was changed.', next: 'Type the password you log in with now.' } : { message: 'That password is wrong.', next: 'Try again (after five wrong tries the gateway waits a minute).' }),
  TOO_MANY_ATTEMPTS: () => ({ message: 'Too many wrong passwords in a row from this browser.', next: 'Wait a minute, then try again.' }),
  NO_PASSWORD: () => ({ message: 'This gateway has no admin password yet, so there is nothing to log in with.', next: 'Open the page on the machine Trellis runs on and set one under Password.' }),
  UNAUTHENTICATED: () => ({ message: 'You are not logged in (or your login ended).', next: 'Log in again; the page continues where you were.' }),
  FORBIDDEN: (_e, action) =>
    action === 'password'
      ? { message: 'The admin password can only be set or changed from this page on the gateway itself, by someone logged in as admin (the first one only from the machine Trellis runs on).' }
      : { message: 'Your login may not do this.', next: 'Log in with the admin password on the projects page.' },
  HTTPS_REQUIRED: () => ({ message: 'The password is not changed over a plain http:// address from another machine: it would cross the network readable by anyone on the way.', next: 'Open the gateway at its https:// address, or change it on the machine Trellis runs on.' }),
  STALE_REVISION: () => ({ message: 'Someone changed this while you were editing; nothing was saved.', next: 'Reload to see their change, then make yours again.' }),
  NODE_NOT_FOUND: (e) => ({ message: cleanMessage(e.message ?? ''), next: 'The node may have been renamed or removed: pick it again from the board.' }),
  THREAD_NOT_FOUND: (e) => ({ message: cleanMessage(e.message ?? ''), next: 'The issue may live in another project or store: search the issue list.' }),
  SESSION_NOT_FOUND: (e) => ({ message: cleanMessage(e.message ?? ''), next: 'Pick the session again from the sessions list.' }),
  SCENARIO_NOT_FOUND: (e) => ({ message: cleanMessage(e.message ?? ''), next: 'Declare it in a spec node’s front matter (scenarios: [{ id, run }]), or pick one from the scoreboard.' }),
  // The live terminal's refusals (the pane stream's `error` messages, and a pasted file it could not type):
  // `details.viewOnly` is a login that may only watch, `details.file` the pasted file that was uploaded.
  READ_ONLY: (e) =>
    e.details?.viewOnly === true
      ? { message: 'Your login may watch this terminal but not type into it, so nothing was typed.', next: 'Log in with the admin password (or a project password that grants it) to type here.' }
      : { message: `The terminal is read-only, so ${str(e.details?.file) ? `the file ${str(e.details?.file)} was uploaded, but its path was not typed` : 'nothing was typed into it'}.`, next: 'Untick Read-only, then try again.' },
  // Said by the page itself: a pasted file was uploaded while the terminal was not connected.
  PANE_NOT_LIVE: (e) => ({ message: `The file ${str(e.details?.file) ?? ''} was uploaded, but the terminal is not connected, so its path was not typed.`, next: 'Paste it again once the terminal shows live.' }),
  INPUT_FAILED: () => ({ message: 'What was typed did not reach the session’s terminal.', next: 'Type it again; if it keeps failing, the server’s log says why.' }),
  RESIZE_FAILED: () => ({ message: 'The session’s terminal could not be resized to fit this screen; it keeps the size it has.' }),
  INVALID_INPUT: (_e, action) => (action === 'terminal' ? { message: 'The server did not understand what this page sent to the terminal, so nothing was typed.', next: 'Reload the page: it may be older than the server.' } : undefined),
  // The configuration is a file a person edits: its file, line and repair are the words that help.
  CONFIG_INVALID: (e) => ({ message: e.message ?? 'The project’s configuration cannot be read.', next: 'Fix trellis.json as the message says; the page picks the change up by itself.' }),
};

/** Per action, the words for a refusal whose `details.needs` names one of that action's own controls. */
const NEEDS: Record<string, PageWords> = {
  gitInit: { message: 'This folder is not in a git repository, so it was not registered.', next: 'Tick “Create a git repository here” and click Register again.' },
};

/** The page's words for `error` met by `action`. */
export function wordsFor(error: unknown, action?: PageAction): PageWords {
  if (!error) return { message: '' };
  if (typeof error !== 'object') return { message: cleanMessage(String(error)) };
  const e = error as ErrorLike;
  const needs = str(e.details?.needs);
  if (needs && NEEDS[needs]) return NEEDS[needs];
  const own = e.code ? WORDS[e.code]?.(e, action) : undefined;
  if (own) return own;
  // An answer with no error of ours in it (a proxy's page, a crash): the status is all there is to say.
  if (e.code === 'INTERNAL' || e.code?.startsWith('HTTP_')) {
    return { message: `The server could not do this${e.status ? ` (it answered ${e.status})` : ''}.`, next: 'Try again; if it keeps failing, the server’s log says why.' };
  }
  return { message: cleanMessage(e.message ?? String(error)) };
}

/**
 * What the live terminal says when its connection closed, from the pane stream's close code (README, "The
 * pane stream"); the socket's own reason is written for the API and stays out.
 */
export function paneClosedWords(closeCode: number): PageWords {
  switch (closeCode) {
    case 1000:
      return { message: 'The session ended, so its terminal closed.' };
    case 1011:
      return { message: 'The server could not read the session’s terminal.', next: 'The page tries again by itself; if it keeps failing, the server’s log says why.' };
    case 1012:
      return { message: 'The project’s server is restarting.', next: 'The terminal reconnects by itself in a moment.' };
    case 4001:
      return { message: 'This page fell too far behind the terminal’s output (a slow connection), so the server let it go.', next: 'It reconnects by itself with a fresh screen.' };
    default:
      return { message: 'The connection to the terminal dropped.', next: 'The page reconnects by itself; if it keeps failing, check that the project’s server is running.' };
  }
}

/** A clause speaks CLI or API: a `trellis` command, a --flag, an HTTP verb and path, JSON, or "send <field>". */
const SPEAKS_API = /\btrellis [a-z]|(^|[\s('"])--[a-z]|\b(GET|POST|PUT|PATCH|DELETE) \/|\b(GET|POST|PUT|PATCH|DELETE) api\/|\{"|\bsend [a-zA-Z]+: /;

/**
 * An API message made fit for the page: parenthesized asides and clauses that speak CLI or API are
 * dropped, byte counts read as sizes, and it starts with a capital and ends with a full stop. What is
 * left says what happened; when every clause speaks API, the first one stays (with its asides removed).
 */
export function cleanMessage(text: string): string {
  let t = text.trim();
  // Asides such as "(trellis projects add --git)" or "(POST /api/sessions/x/merge {...})".
  t = t.replace(/\s*\((?:[^()]|\([^()]*\))*\)/g, (m) => (SPEAKS_API.test(m) ? '' : m));
  // Clause ends (not the `": "` inside a JSON body, which stays whole and is dropped as JSON).
  const clauses = t.split(/(?<=[^"'][;:.])\s+|,\s+(?=or\s)/);
  const kept = clauses.filter((c) => !SPEAKS_API.test(c));
  t = (kept.length ? kept : clauses.slice(0, 1)).join(' ').trim();
  t = t.replace(/[;:,]\s*$/, '');
  t = t.replace(/\b(\d{4,}) bytes\b/g, (_m, n: string) => size(Number(n)));
  if (!t) return 'Something went wrong.';
  t = t[0]!.toUpperCase() + t.slice(1);
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** A byte count as people say it: 1048576 → "1 MB", 1536 → "1.5 KB". */
export function size(bytes: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB'];
  let n = bytes;
  let u = 0;
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024;
    u++;
  }
  return `${u === 0 ? n : Number(n.toFixed(1))} ${units[u]}`;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
