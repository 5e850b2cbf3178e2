import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { isCode } from '../fs-errors.js';
import { confinedPath, isBelow } from '../safe-path.js';

/*
 * Read-only catalogs a project offers its dashboard and agents: config-root plugins, slash commands
 * and guidance. (The host's resource inventory is store/host/resources.ts.)
 *
 * A plugin is a folder under `pluginRoot` (default `.trellis/plugins/<name>/`) holding `plugin.json`:
 *   { "name": "review-kit", "description": "...", "surfaces": ["command", "guide"],
 *     "commands": [{ "name": "review", "description": "...", "file": "commands/review.md" }],
 *     "guides":   [{ "id": "review-howto", "title": "...", "file": "guides/howto.md" }] }
 * `surfaces` declares what the plugin offers; only plugins declaring `command` are command plugins.
 */

export interface SourceRef {
  /** Path relative to the project root. */
  readonly path: string;
  /** sha256 of the file's bytes: a reader can tell a stale copy, and no copy of the prose travels. */
  readonly hash: string;
}

export interface Plugin {
  readonly name: string;
  readonly description: string;
  readonly surfaces: readonly string[];
  readonly source: SourceRef;
  readonly commands: readonly { readonly name: string; readonly description: string; readonly source: SourceRef }[];
  readonly guides: readonly { readonly id: string; readonly title: string; readonly source: SourceRef }[];
  readonly problem?: string;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function sourceRef(root: string, abs: string): SourceRef | null {
  // A file that is (or runs through) a symlink out of the project is not part of any catalog: not even
  // its hash leaves, since a hash confirms a guess of the bytes.
  if (!isBelow(root, abs)) return null;
  try {
    return { path: relative(root, abs), hash: sha256(readFileSync(abs)) };
  } catch (err) {
    if (isCode(err, 'ENOENT') || isCode(err, 'EISDIR')) return null;
    throw err;
  }
}

function dirNames(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

/** Every plugin under the plugin root; one whose plugin.json does not parse is listed with its problem. */
export function readPlugins(root: string, pluginRoot: string): Plugin[] {
  const base = join(root, pluginRoot);
  if (!isBelow(root, base)) return [];
  return dirNames(base).flatMap((dir): Plugin[] => {
    const manifest = join(base, dir, 'plugin.json');
    const source = sourceRef(root, manifest);
    if (!source) return [];
    const broken = (problem: string): Plugin => ({ name: dir, description: '', surfaces: [], source, commands: [], guides: [], problem });
    let raw: Record<string, unknown>;
    try {
      raw = JSON.parse(readFileSync(manifest, 'utf8'));
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return [broken('plugin.json must hold a JSON object')];
    } catch (err) {
      return [broken(`plugin.json is not valid JSON (${(err as Error).message})`)];
    }
    const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null) : []);
    const str = (v: unknown, fallback = '') => (typeof v === 'string' ? v : fallback);
    // A plugin's files stay inside its own folder.
    const fileRef = (f: unknown) => {
      const path = typeof f === 'string' ? confinedPath(join(base, dir), f) : null;
      return path ? sourceRef(root, path) : null;
    };
    return [
      {
        name: str(raw.name, dir),
        description: str(raw.description),
        surfaces: Array.isArray(raw.surfaces) ? raw.surfaces.filter((s): s is string => typeof s === 'string') : [],
        source,
        commands: list(raw.commands).flatMap((c) => {
          const ref = fileRef(c.file);
          return ref && typeof c.name === 'string' ? [{ name: c.name, description: str(c.description), source: ref }] : [];
        }),
        guides: list(raw.guides).flatMap((g) => {
          const ref = fileRef(g.file);
          return ref && typeof g.id === 'string' ? [{ id: g.id, title: str(g.title, g.id), source: ref }] : [];
        }),
      },
    ];
  });
}

export interface SlashCommand {
  readonly name: string;
  readonly description: string;
  readonly origin: 'plugin' | 'agent';
  readonly plugin?: string;
  readonly source: SourceRef;
}

/** Folders where agent tools keep their own slash commands, one Markdown file per command. */
const AGENT_COMMAND_DIRS = ['.claude/commands'];

/** The union of command plugins' commands and the agent tool's own commands, sorted by name. */
export function slashCommands(root: string, plugins: readonly Plugin[]): SlashCommand[] {
  const fromPlugins = plugins
    .filter((p) => p.surfaces.includes('command'))
    .flatMap((p) => p.commands.map((c) => ({ name: c.name, description: c.description, origin: 'plugin' as const, plugin: p.name, source: c.source })));
  const fromAgent = AGENT_COMMAND_DIRS.flatMap((dir) => {
    let files: string[];
    try {
      files = readdirSync(join(root, dir)).filter((f) => f.endsWith('.md')).sort();
    } catch {
      return [];
    }
    return files.flatMap((f) => {
      const abs = join(root, dir, f);
      const ref = sourceRef(root, abs);
      if (!ref) return [];
      return [{ name: basename(f, '.md'), description: describeCommand(readFileSync(abs, 'utf8')), origin: 'agent' as const, source: ref }];
    });
  });
  return [...fromPlugins, ...fromAgent].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A command file's `description:` front matter line, else its first non-empty line. */
function describeCommand(text: string): string {
  const fm = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  const d = fm ? /^description:\s*(.+)$/m.exec(fm[1]!) : null;
  if (d) return d[1]!.trim().replace(/^["']|["']$/g, '');
  const body = fm ? text.slice(fm[0].length) : text;
  return body.split('\n').map((l) => l.replace(/^#+\s*/, '').trim()).find(Boolean) ?? '';
}

export interface GuidanceEntry {
  readonly id: string;
  readonly title: string;
  readonly kind: 'doc' | 'guide' | 'command';
  readonly source: SourceRef;
}

/** Project documents that are guidance wherever they exist. */
const DOCS = ['README.md', 'AGENTS.md', 'CLAUDE.md', 'CONTRIBUTING.md'];

/**
 * The guidance catalog: references to where guidance lives (project docs, plugin guides, slash
 * commands), each with a content hash, never the prose itself. Deterministic: sorted by id.
 */
export function guidanceCatalog(root: string, plugins: readonly Plugin[]): GuidanceEntry[] {
  const docs = DOCS.flatMap((f) => {
    const ref = sourceRef(root, join(root, f));
    return ref ? [{ id: `doc:${f}`, title: f, kind: 'doc' as const, source: ref }] : [];
  });
  const guides = plugins.flatMap((p) => p.guides.map((g) => ({ id: `guide:${p.name}/${g.id}`, title: g.title, kind: 'guide' as const, source: g.source })));
  const commands = slashCommands(root, plugins).map((c) => ({ id: `command:${c.name}`, title: c.description || c.name, kind: 'command' as const, source: c.source }));
  return [...docs, ...guides, ...commands].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
