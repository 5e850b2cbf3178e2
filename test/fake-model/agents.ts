import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { endProcessesIn } from '../helpers/processes.js';

/** The agent versions the adapters are checked against (pinned in package.json's devDependencies). */
export const CLAUDE_VERSION = '2.1.197';
export const CODEX_VERSION = '0.169.0';
/** Gemini CLI (npm `@google/gemini-cli`, installed without its install scripts: no keytar, no node-pty, which an API key and tmux do not need). */
export const GEMINI_VERSION = '0.61.0';
/**
 * The Claude Code versions the real-agent suites run against: the oldest supported (npm
 * `@anthropic-ai/claude-code`) and the newest checked (`claude-code-next`, an npm alias of the same package).
 */
export const CLAUDE_VERSIONS = ['2.1.197', '2.1.332'] as const;
export type ClaudeVersion = (typeof CLAUDE_VERSIONS)[number];
/** The package each Claude Code version is installed as. */
const CLAUDE_PACKAGES: Readonly<Record<ClaudeVersion, string>> = { '2.1.197': '@anthropic-ai/claude-code', '2.1.332': 'claude-code-next' };
/**
 * The Codex versions the real-agent suites run against: the pinned one (npm `@openai/codex`) and the newest
 * checked (`codex-next`, an npm alias of the same package).
 */
export const CODEX_VERSIONS = ['0.169.0', '0.171.0'] as const;
export type CodexVersion = (typeof CODEX_VERSIONS)[number];
/** The package each Codex version is installed as. */
const CODEX_PACKAGES: Readonly<Record<CodexVersion, string>> = { '0.169.0': '@openai/codex', '0.171.0': 'codex-next' };

/** The key the agents send the fake model: any string does; claude approves it by its last 20 characters. */
export const FAKE_API_KEY = 'sk-ant-fake-0123456789abcdefghijklmnop';

// Resolved from this package's own node_modules (the source tree or dist/ alike).
const require = createRequire(import.meta.url);

/** The real programs, as npm installed them: claude's native binary (from its platform package), codex's npm launcher. */
export function agentPrograms(claudeVersion: ClaudeVersion = CLAUDE_VERSION, codexVersion: CodexVersion = CODEX_VERSION): { claude: string; codex: string; gemini: string } {
  const wrapper = require.resolve(`${CLAUDE_PACKAGES[claudeVersion]}/package.json`);
  let claude: string;
  try {
    // The platform package is resolved from the wrapper's own place (an alias nests its own copy).
    claude = join(dirname(createRequire(wrapper).resolve(`@anthropic-ai/claude-code-${process.platform}-${process.arch}/package.json`)), 'claude');
  } catch {
    // The wrapper's postinstall copies the same binary over its placeholder.
    claude = realpathSync(join(dirname(wrapper), 'bin/claude.exe'));
  }
  const codex = join(dirname(require.resolve(`${CODEX_PACKAGES[codexVersion]}/package.json`)), 'bin/codex.js');
  const gemini = join(dirname(require.resolve('@google/gemini-cli/package.json')), 'bundle/gemini.js');
  return { claude, codex, gemini };
}

const binDirs = new Map<string, string>();
/** A directory holding `claude` (of `claudeVersion`), `codex` (of `codexVersion`) and `gemini`, and nothing else, for the front of PATH. */
export function agentBinDir(claudeVersion: ClaudeVersion = CLAUDE_VERSION, codexVersion: CodexVersion = CODEX_VERSION): string {
  const key = `${claudeVersion} ${codexVersion}`;
  const known = binDirs.get(key);
  if (known && existsSync(known)) return known;
  const dir = mkdtempSync(join(tmpdir(), 'trellis-agents-bin-'));
  const { claude, codex, gemini } = agentPrograms(claudeVersion, codexVersion);
  symlinkSync(claude, join(dir, 'claude'));
  symlinkSync(codex, join(dir, 'codex'));
  symlinkSync(gemini, join(dir, 'gemini'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  binDirs.set(key, dir);
  return dir;
}

/** What the test sets of the agents' own first-run state in their HOME. */
export interface AgentSetup {
  /** claude: onboarding (theme, intro) done. Default true. */
  readonly onboarded?: boolean;
  /** claude: the API key in the environment approved ("Detected a custom API key" answered Yes). Default true. */
  readonly approveKey?: boolean;
  /** Folders both agents trust ("Yes, I trust this folder" / codex's folder access). Default none. */
  readonly trust?: readonly string[];
  /** codex: logged in with an API key (auth.json). Default true. */
  readonly codexLogin?: boolean;
  /** codex: `fake` (a custom provider at the fake model, needing no login) or codex's default OpenAI provider. Default `fake`. */
  readonly codexProvider?: 'fake' | 'openai';
  /** claude: `messageIdleNotifThresholdMs`, how long after a turn the idle_prompt notification comes. Default 1500. */
  readonly idleMs?: number;
  /** Which Claude Code runs as `claude`. Default the oldest supported (CLAUDE_VERSION). */
  readonly claudeVersion?: ClaudeVersion;
  /** Which Codex runs as `codex`. Default the pinned one (CODEX_VERSION). */
  readonly codexVersion?: CodexVersion;
}

export interface AgentHome {
  /** The agents' HOME (claude's `~/.claude.json` and `~/.claude/`). */
  readonly home: string;
  /** codex's CODEX_HOME (`config.toml`, `auth.json`, `sessions/`). */
  readonly codexHome: string;
  /** The environment that runs both against the fake model, offline, without self-updates. */
  readonly env: Record<string, string>;
}

/**
 * A HOME of the test's own, with the first-run state the test chooses, and the environment that points
 * claude (`ANTHROPIC_BASE_URL`) and codex (a custom provider, `wire_api = "responses"`) at `modelUrl`.
 * `home` is a fresh temp dir unless the caller hands one in (and removes it).
 */
export function agentHome(modelUrl: string, setup: AgentSetup = {}, home: string = mkdtempSync(join(tmpdir(), 'trellis-agent-home-'))): AgentHome {
  const codexHome = join(home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  const trust = (setup.trust ?? []).map((p) => realpathSync(p));
  writeClaudeState(home, setup, trust);
  writeCodexState(codexHome, modelUrl, setup, trust);
  writeGeminiState(home, trust);
  const env: Record<string, string> = {
    HOME: home,
    CODEX_HOME: codexHome,
    PATH: `${agentBinDir(setup.claudeVersion, setup.codexVersion)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: FAKE_API_KEY,
    FAKE_OPENAI_API_KEY: FAKE_API_KEY,
    // Gemini CLI: the Gemini API's base (the @google/genai SDK's own variable) and a key.
    GOOGLE_GEMINI_BASE_URL: modelUrl,
    GEMINI_API_KEY: FAKE_API_KEY,
    // Never update itself (an npm install of the newest version), never wait minutes on retries.
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    NO_UPDATE_NOTIFIER: '1',
  };
  return { home, codexHome, env };
}

/** claude's `~/.claude.json`: onboarding, per-project trust (keyed by the main checkout's path), API-key approval. */
export function writeClaudeState(home: string, setup: AgentSetup, trust: readonly string[]): void {
  const onboarded = setup.onboarded ?? true;
  const state: Record<string, unknown> = {
    numStartups: onboarded ? 5 : 0,
    autoUpdates: false,
    messageIdleNotifThresholdMs: setup.idleMs ?? 1500,
    // 2.1.332 offers its fullscreen renderer in a dialog over its first tool call when it runs confined
    // (unconfined it does not; which of its terminal checks fails in the sandbox is not pinned down): seen.
    fullscreenUpsellSeenCount: 99,
    projects: Object.fromEntries(trust.map((p) => [p, { allowedTools: [], hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, projectOnboardingSeenCount: 1 }])),
  };
  if (onboarded) Object.assign(state, { hasCompletedOnboarding: true, lastOnboardingVersion: setup.claudeVersion ?? CLAUDE_VERSION, theme: 'dark' });
  if (setup.approveKey ?? true) state.customApiKeyResponses = { approved: [FAKE_API_KEY.slice(-20)], rejected: [] };
  writeFileSync(join(home, '.claude.json'), `${JSON.stringify(state, null, 2)}\n`);
}

/** codex's `config.toml` (the fake provider, no retries, no update check, trusted folders) and `auth.json`. */
export function writeCodexState(codexHome: string, modelUrl: string, setup: AgentSetup, trust: readonly string[]): void {
  const toml = [
    ...(setup.codexProvider === 'openai' ? [] : ['model = "gpt-fake"', 'model_provider = "fake"']),
    'check_for_update_on_startup = false',
    '',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = "${modelUrl}/v1"`,
    'wire_api = "responses"',
    'env_key = "FAKE_OPENAI_API_KEY"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    ...trust.flatMap((p) => [`[projects.${JSON.stringify(p)}]`, 'trust_level = "trusted"', '']),
  ];
  writeFileSync(join(codexHome, 'config.toml'), `${toml.join('\n')}\n`);
  if (setup.codexLogin ?? true) writeFileSync(join(codexHome, 'auth.json'), `${JSON.stringify({ OPENAI_API_KEY: FAKE_API_KEY }, null, 2)}\n`);
}

/**
 * Gemini CLI's `~/.gemini/settings.json` (the API key as its auth, no update checks, no usage statistics)
 * and `trustedFolders.json`: a trusted folder covers every folder under it, and Gemini runs a project's
 * hooks (Trellis's signals) only in a trusted one.
 */
export function writeGeminiState(home: string, trust: readonly string[]): void {
  const dir = join(home, '.gemini');
  mkdirSync(dir, { recursive: true });
  const settings = { security: { auth: { selectedType: 'gemini-api-key' } }, general: { disableAutoUpdate: true, disableUpdateNag: true }, privacy: { usageStatisticsEnabled: false }, telemetry: { enabled: false } };
  writeFileSync(join(dir, 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  writeFileSync(join(dir, 'trustedFolders.json'), `${JSON.stringify(Object.fromEntries(trust.map((p) => [p, 'TRUST_FOLDER'])), null, 2)}\n`);
}

/** Ends every process still running from a test's own folders (codex's app-server daemon among them). */
export function stopAgentDaemons(...dirs: string[]): number {
  return endProcessesIn(dirs);
}
