/**
 * The three forges' stand-ins behind one face, so one contract suite runs against each driver: how to
 * start one, make its driver, and read back what the forge holds.
 */
import type { ForgeDriver } from '../../src/store/forge/driver.js';
import { ForgejoDriver } from '../../src/store/forge/forgejo.js';
import { GitHubDriver } from '../../src/store/forge/github.js';
import { GitLabDriver } from '../../src/store/forge/gitlab.js';
import { ForgejoForge } from './forgejo-forge.js';
import { GitHubForge } from './github-forge.js';
import { GitLabForge } from './gitlab-forge.js';
import type { Fault } from './standin-server.js';

export interface SeedInput {
  title: string;
  body?: string | null;
  user?: string;
  labels?: string[];
  at?: string;
}

/** What every stand-in offers the suite. */
export interface AnyForge {
  readonly apiUrl: string;
  readonly faults: Fault[];
  readonly log: { method: string; path: string; status: number }[];
  seed(input: SeedInput): number;
  seedComment(number: number, body: string, user?: string): void;
  goDown(): Promise<void>;
  comeBack(): Promise<void>;
  stop(): Promise<void>;
}

export interface Subject<F extends AnyForge = AnyForge> {
  readonly name: string;
  readonly driverName: string;
  readonly store: string;
  readonly tokenEnv: string;
  /** How trellis.json names its project, and a name it does not have. */
  readonly project: string;
  readonly missingProject: string;
  readonly projectKey: string;
  /** Items per page the driver asks for. */
  readonly perPage: number;
  /** How a pull after the first asks for less: conditional requests (ETags) or a since-filter. */
  readonly incremental: 'etag' | 'since';
  /** The issue listing's path, to aim a fault at it. */
  readonly listPath: RegExp;
  readonly sinceParam: string | null;
  start(token: string): Promise<F>;
  driver(f: F, env: NodeJS.ProcessEnv, project?: string): ForgeDriver;
  permalink(n: number): string;
  stateOf(f: F, n: number): 'open' | 'closed';
  bodyOf(f: F, n: number): string | null;
  commentsOn(f: F, n: number): string[];
}

export const github: Subject<GitHubForge> = {
  name: 'GitHub',
  driverName: 'github',
  store: 'github.com',
  tokenEnv: 'GITHUB_TOKEN',
  project: 'acme/shop',
  missingProject: 'acme/nope',
  projectKey: '"repo": "acme/nope"',
  perPage: 100,
  incremental: 'etag',
  listPath: /\/repos\/acme\/shop\/issues\?/,
  sinceParam: null,
  start: (token) => new GitHubForge({ token }).start(),
  driver: (f, env, project = 'acme/shop') => new GitHubDriver({ driver: 'github', host: 'github.com', repo: project, apiUrl: f.apiUrl }, env),
  permalink: (n) => `https://github.com/acme/shop/issues/${n}`,
  stateOf: (f, n) => f.issues[n - 1]!.state,
  bodyOf: (f, n) => f.issues[n - 1]!.body,
  commentsOn: (f, n) => f.comments.filter((c) => c.issue === n).map((c) => c.body),
};

export const gitlab: Subject<GitLabForge> = {
  name: 'GitLab',
  driverName: 'gitlab',
  store: 'gitlab.com',
  tokenEnv: 'GITLAB_TOKEN',
  project: 'acme/shop',
  missingProject: 'acme/nope',
  projectKey: '"project": "acme/nope"',
  perPage: 100,
  incremental: 'since',
  listPath: /\/projects\/[^/]+\/issues\?/,
  sinceParam: 'updated_after',
  start: (token) => new GitLabForge({ token }).start(),
  driver: (f, env, project = 'acme/shop') => new GitLabDriver({ driver: 'gitlab', host: 'gitlab.com', repo: project, apiUrl: f.apiUrl }, env),
  permalink: (n) => `https://gitlab.com/acme/shop/-/issues/${n}`,
  stateOf: (f, n) => (f.issues[n - 1]!.state === 'opened' ? 'open' : 'closed'),
  bodyOf: (f, n) => f.issues[n - 1]!.description,
  commentsOn: (f, n) => f.notes.filter((c) => c.iid === n && !c.system).map((c) => c.body),
};

export const forgejo: Subject<ForgejoForge> = {
  name: 'Forgejo',
  driverName: 'forgejo',
  store: 'codeberg.org',
  tokenEnv: 'FORGEJO_TOKEN',
  project: 'acme/shop',
  missingProject: 'acme/nope',
  projectKey: '"repo": "acme/nope"',
  perPage: 50,
  incremental: 'since',
  listPath: /\/repos\/acme\/shop\/issues\?state/,
  sinceParam: 'since',
  start: (token) => new ForgejoForge({ token }).start(),
  driver: (f, env, project = 'acme/shop') => new ForgejoDriver({ driver: 'forgejo', host: 'codeberg.org', repo: project, apiUrl: f.apiUrl }, env),
  permalink: (n) => `https://codeberg.org/acme/shop/issues/${n}`,
  stateOf: (f, n) => f.issues[n - 1]!.state,
  bodyOf: (f, n) => f.issues[n - 1]!.body,
  commentsOn: (f, n) => f.comments.filter((c) => c.number === n).map((c) => c.body),
};

export const subjects = [github, gitlab, forgejo] as Subject[];
