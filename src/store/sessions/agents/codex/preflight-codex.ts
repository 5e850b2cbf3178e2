import { childProcess } from '../../../lazy-builtins.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PreflightContext } from '../preflight-context.js';
import { codexHome } from '../agent-homes.js';

export { codexHome };

/**
 * What Codex's first run will ask in this project (checked against 0.169.0): a login (`codex login
 * status`), needed only for OpenAI's own provider — a custom `model_provider` takes its key from the
 * environment —, and folder trust (`[projects."<path>"] trust_level = "trusted"` in its config.toml).
 */
export async function codexPreflight(ctx: PreflightContext, program: string): Promise<string[]> {
  const config = join(codexHome(ctx.env), 'config.toml');
  let toml = '';
  try {
    toml = readFileSync(config, 'utf8');
  } catch {
    // No config: codex's defaults (OpenAI's provider, nothing trusted).
  }
  const warnings: string[] = [];
  const provider = topLevelString(toml, 'model_provider') ?? 'openai';
  if (provider === 'openai' && !(await loggedIn(program, ctx.env))) {
    warnings.push(`Codex is not logged in ('codex login status' says so): the session will wait on "Sign in with ChatGPT" (awaiting{setup}); run 'codex login' (or 'codex login --with-api-key')`);
  }
  if (!trusts(toml, ctx.mainRoot)) {
    warnings.push(
      `Codex has not trusted ${ctx.mainRoot}: the session will wait on its folder access dialog (awaiting{setup}); add [projects."${ctx.mainRoot}"] trust_level = "trusted" to ${config}, or run 'codex' once in ${ctx.mainRoot} and choose "Trust and continue"`,
    );
  }
  return warnings;
}

function loggedIn(program: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return new Promise((resolve) => {
    childProcess().execFile(program, ['login', 'status'], { env, timeout: 10_000 }, (err) => resolve(!err));
  });
}

/** A string key before the first table of a TOML document (what codex's top-level settings are). */
function topLevelString(toml: string, key: string): string | null {
  const top = toml.split(/^\s*\[/m, 1)[0] ?? '';
  const m = new RegExp(`^\\s*${key}\\s*=\\s*["']([^"']*)["']`, 'm').exec(top);
  return m ? m[1]! : null;
}

/** Whether `[projects."<dir>"]` says `trust_level = "trusted"`. */
function trusts(toml: string, dir: string): boolean {
  const headers = [`[projects.${JSON.stringify(dir)}]`, `[projects.'${dir}']`];
  for (const header of headers) {
    const at = toml.indexOf(header);
    if (at < 0) continue;
    const body = toml.slice(at + header.length).split(/^\s*\[/m, 1)[0] ?? '';
    if (/^\s*trust_level\s*=\s*["']trusted["']/m.test(body)) return true;
  }
  return false;
}
