/**
 * `npm run bench [-- <group>...]`: the speed targets, measured, one JSON line each. Targets are reported
 * beside the figures; nothing here fails a build. With no group named, every group runs in this order.
 *
 * One group a line, loaded only when chosen: a new bench adds its own line (merges of parallel work
 * then touch different lines) and a group's setup never runs for another's.
 */
type Group = readonly [name: string, run: () => Promise<void>];

const groups: readonly Group[] = [
  ['append', async () => (await import('./issues.js')).appendBench()],
  ['list', async () => (await import('./issues.js')).listBench()],
  ['graph', async () => (await import('./graph.js')).graphBench()],
  ['overlay', async () => (await import('./graph.js')).overlayBench()],
  ['sse', async () => (await import('./graph.js')).sseBench()],
  ['proxy', async () => (await import('./proxy.js')).proxyBench()],
  ['forge', async () => (await import('./forge.js')).forgeBench()],
  ['scale', async () => (await import('./scale.js')).scaleBench()],
  ['eval', async () => (await import('./eval.js')).evalBench()],
  ['sessions', async () => (await import('./sessions.js')).sessionsBench()],
  ['paneio', async () => (await import('./paneio.js')).paneioBench()],
  ['gateway', async () => (await import('./gateway.js')).gatewayBench()],
  ['dashboard', async () => (await import('./dashboard.js')).dashboardBench()],
  ['sync', async () => (await import('./sync.js')).syncBench()],
  ['login', async () => (await import('./login.js')).loginBench()],
  ['gateway-proxy', async () => (await import('./gateway-proxy.js')).gatewayProxyBench()],
  ['evidence', async () => (await import('./evidence.js')).evidenceBench()],
  ['speed', async () => (await import('./speed.js')).speedBench()],
  ['agents', async () => (await import('./agents.js')).agentsBench()],
  [
    'notify',
    async () => {
      await (await import('./notify.js')).notifyBench();
      await (await import('./notify-answer.js')).notifyAnswerBench();
    },
  ],
  ['hosts', async () => (await import('./hosts.js')).hostsBench()],
  ['cli', async () => (await import('./cli-start.js')).cliStartBench()],
  ['busy', async () => (await import('./busy-sessions.js')).busySessionsBench()],
  ['cost', async () => (await import('./cost.js')).costBench()],
];

const byName = new Map(groups);
const chosen = process.argv.slice(2).length ? process.argv.slice(2) : groups.map(([name]) => name);
const unknown = chosen.filter((name) => !byName.has(name));
if (unknown.length) {
  console.error(`bench: unknown group ${unknown.map((n) => `'${n}'`).join(', ')}; groups: ${groups.map(([n]) => n).join(', ')}`);
  process.exit(2);
}
for (const name of chosen) await byName.get(name)!();
