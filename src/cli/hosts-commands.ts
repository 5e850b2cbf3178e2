import { trellisHome } from '../store/trellis-home.js';
import { addHost, readHosts, removeHost } from '../store/host/hosts.js';
import { out } from './output.js';
import { checkShape, type VerbContext } from './shape.js';
import { unknownAction } from './unknown-action.js';

export const USAGE = {
  add: 'trellis hosts add <name> <ssh-destination> [--trellis <remote command>] [--ssh-config <file>] [--json]',
  ls: 'trellis hosts ls [--json]',
  rm: 'trellis hosts rm <name> [--json]',
};

const json = (value: unknown) => out(`${JSON.stringify(value, null, 2)}\n`);

/** `trellis hosts add|ls|rm`: other machines the dashboard reaches over SSH, the same verbs as /hub/hosts. */
export async function runHosts(action: string | undefined, ctx: VerbContext): Promise<number> {
  const home = trellisHome();
  if (action === 'ls' || action === undefined) {
    checkShape({ args: [], options: ['json'], usage: USAGE.ls }, ctx);
    const hosts = readHosts(home);
    if (ctx.options.json) await json({ hosts });
    else if (!hosts.length) await out("no hosts yet; add one with 'trellis hosts add <name> <ssh-destination>'\n");
    else await out(hosts.map((h) => `${h.name}  ${h.destination}  ${h.trellis}${h.sshConfig ? `  (ssh -F ${h.sshConfig})` : ''}\n`).join(''));
    return 0;
  }
  if (action === 'add') {
    checkShape({ args: ['name', 'ssh-destination'], options: ['trellis', 'ssh-config', 'sshConfig', 'json'], usage: USAGE.add }, ctx);
    const sshConfig = (ctx.options['ssh-config'] ?? ctx.options.sshConfig) as string | undefined;
    const host = await addHost(home, { name: ctx.args[0]!, destination: ctx.args[1]!, ...(ctx.options.trellis !== undefined ? { trellis: String(ctx.options.trellis) } : {}), ...(sshConfig !== undefined ? { sshConfig } : {}) });
    if (ctx.options.json) await json({ host });
    else await out(`added ${host.name} (ssh ${host.destination}); a running dashboard connects to it now\n`);
    return 0;
  }
  if (action === 'rm') {
    checkShape({ args: ['name'], options: ['json'], usage: USAGE.rm }, ctx);
    const host = await removeHost(home, ctx.args[0]!);
    if (ctx.options.json) await json({ host });
    else await out(`removed ${host.name}; nothing on it was touched\n`);
    return 0;
  }
  throw unknownAction('hosts', action, USAGE);
}
