import { randomUUID } from 'node:crypto';
import type https from 'node:https';
import { statSync } from 'node:fs';
import { isLoopback } from '../store/host/endpoint-record.js';
import { hubConfigPath, readHubConfig, type HubConfig } from '../store/host/hub-config.js';
import { perTurn } from '../store/host/per-turn.js';
import { OnlineVerdicts } from '../store/host/online-verdict.js';
import { gateOf, ProjectLister } from '../store/host/project-list.js';
import { isRemoteId, RemoteProjects } from '../store/host/remote-projects.js';
import { Backends } from './backends.js';
import { OpenStreams } from './open-streams.js';
import type { Notifier } from './notify-hub.js';
import type { ProjectFeed } from './project-feed.js';
import { LoginLimiter, SessionTable, type Grant } from './login-sessions.js';

export interface GatewayOptions {
  /** TRELLIS_HOME. */
  readonly home: string;
  /** True when the port speaks HTTPS: the cookie is `__Host-` prefixed and Secure. */
  readonly tls: boolean;
  /** Names this gateway answers to beyond loopback ones (e.g. the --host address). */
  readonly extraHosts?: readonly string[];
  /** A single-project gateway (`serve --public`) lists and proxies only this project id. */
  readonly only?: string;
  /** Environment for the CLI runs host operations make. */
  readonly env?: NodeJS.ProcessEnv;
  /** The TLS agent Web Push requests use (a test's stand-in push service and its CA); default: the system's CAs. */
  readonly pushAgent?: https.Agent;
}

/** Who is asking, as far as the gateway can tell. */
export interface Caller {
  /** hub.json as of this request. */
  readonly hub: HubConfig;
  readonly loopback: boolean;
  readonly passwordSet: boolean;
  readonly sessionId: string | undefined;
  readonly grant: Grant | undefined;
  readonly admin: boolean;
}

/** A client address is loopback (IPv4-mapped IPv6 included). */
export const loopbackAddress = (addr: string | undefined): boolean => !!addr && isLoopback(addr.replace(/^::ffff:/, ''));

/** The gateway's state shared by its HTTP routes and its WebSocket upgrade handler. */
export class GatewayState {
  /** Answers GET /health, so a record of this gateway can be checked against the live process. */
  readonly instanceId = randomUUID();
  readonly sessions = new SessionTable();
  readonly limiter = new LoginLimiter();
  readonly cookieName: string;
  /** Both spellings: the gateway's cookie never reaches a backend, whichever port set it. */
  readonly ownCookies = ['trellis_session', '__Host-trellis_session'];
  /** Proxied exchanges by the login session that authorized them: they end when it does. */
  readonly streams = new OpenStreams((id) => {
    const hub = this.hubOrError();
    return 'broken' in hub || (!!hub.adminPassword && !!this.sessions.get(id));
  });
  /** The one project feed (set by projectRoutes): the host page's stream and the notifier follow it. */
  feed: ProjectFeed | undefined;
  /** Tells people when a session needs them (set by the server once it exists). */
  notifier: Notifier | undefined;
  /** The registered hosts' SSH connections and their projects (issue 31). */
  readonly remote: RemoteProjects;
  /** This machine's projects' online verdicts, cached: what `/p/:id` proxies to, shared with the list. */
  readonly verdicts: OnlineVerdicts;
  /** The project list, probed through `verdicts`, with each running project's counts. */
  readonly projects: ProjectLister;
  /** The backends proxied to, each with its pool of kept-alive connections. */
  readonly backends = new Backends();
  private cached: { stamp: string; config: HubConfig; password: string | undefined } | undefined;

  constructor(readonly opts: GatewayOptions) {
    this.cookieName = opts.tls ? '__Host-trellis_session' : 'trellis_session';
    this.remote = new RemoteProjects(opts.home);
    this.verdicts = new OnlineVerdicts(opts.home);
    this.projects = new ProjectLister(this.verdicts);
  }

  /** hub.json, re-read when it changes on disk; a new admin password ends every session. */
  hub(): HubConfig {
    const path = hubConfigPath(this.opts.home);
    // One stat per event-loop turn, shared by the requests parsed in it; a missing file (no password
    // yet, the common case) is no exception, which would cost more than the stat.
    const stamp = perTurn(`stat:${path}`, () => {
      try {
        const st = statSync(path, { bigint: true, throwIfNoEntry: false });
        return st ? `${st.mtimeNs}:${st.size}:${st.ino}` : '-';
      } catch {
        return '-';
      }
    });
    if (this.cached?.stamp !== stamp) {
      const config = readHubConfig(this.opts.home);
      if (this.cached && this.cached.password !== config.adminPassword) this.sessions.revokeAll();
      this.cached = { stamp, config, password: config.adminPassword };
    }
    return this.cached.config;
  }

  /** hub.json, or why it cannot be read: the gateway then refuses everything (503) until it is fixed. */
  hubOrError(): HubConfig | { broken: string } {
    try {
      return this.hub();
    } catch (err) {
      return { broken: (err as Error).message };
    }
  }

  /**
   * The admin password was just changed through this gateway: every login ends now, not at the next
   * stat of hub.json (the route then logs its changer in anew, under a fresh id).
   */
  passwordChanged(): void {
    this.sessions.revokeAll();
    this.cached = undefined;
    this.hub();
  }

  allowedHosts(hub: HubConfig = this.hub()): string[] {
    return [...(hub.allowedHosts ?? []), ...(this.opts.extraHosts ?? [])];
  }

  sessionCookie(cookieHeader: string | undefined): string | undefined {
    if (!cookieHeader) return undefined;
    for (const part of cookieHeader.split(';')) {
      const eq = part.indexOf('=');
      if (eq > 0 && part.slice(0, eq).trim() === this.cookieName) return part.slice(eq + 1).trim();
    }
    return undefined;
  }

  caller(remoteAddress: string | undefined, cookieHeader: string | undefined, hub: HubConfig = this.hub()): Caller {
    const loopback = loopbackAddress(remoteAddress);
    const passwordSet = !!hub.adminPassword;
    const sessionId = this.sessionCookie(cookieHeader);
    const grant = passwordSet ? this.sessions.get(sessionId) : undefined;
    return { hub, loopback, passwordSet, sessionId, grant, admin: passwordSet ? !!grant?.admin : loopback };
  }

  /** Whether a login (its session id) still holds; `loopback` holds while the hub has no password. */
  loginAlive(login: string): boolean {
    const hub = this.hubOrError();
    if ('broken' in hub) return false;
    return login === 'loopback' ? !hub.adminPassword : !!this.sessions.get(login);
  }

  /** The caller a login (its session id, or `loopback` on a hub without a password) is, as a request with its cookie would be. */
  callerOfLogin(login: string): Caller | undefined {
    const hub = this.hubOrError();
    if ('broken' in hub) return undefined;
    if (login === 'loopback') return hub.adminPassword ? undefined : { hub, loopback: true, passwordSet: false, sessionId: undefined, grant: undefined, admin: true };
    const grant = hub.adminPassword ? this.sessions.get(login) : undefined;
    return grant && { hub, loopback: false, passwordSet: true, sessionId: login, grant, admin: !!grant.admin };
  }

  /** Where project `id`'s backend answers (this machine's or a registered host's, through its tunnel), or null when offline. */
  async backendUrl(id: string): Promise<string | null> {
    const record = isRemoteId(id) ? this.remote.record(id) : await this.verdicts.onlineRecord(id);
    return record?.url ?? null;
  }

  /** Whether `caller` may reach project `id` through `/p/:id`: null when yes, else 401 or 403. */
  projectRefusal(caller: Caller, id: string): 401 | 403 | null {
    const gate = gateOf(caller.hub, id);
    if (gate === 'loopback') return caller.loopback ? null : 401;
    if (gate === 'open' || caller.admin) return null;
    if (typeof gate === 'object' && caller.grant?.projects.has(id)) return null;
    return caller.grant ? 403 : 401;
  }
}
