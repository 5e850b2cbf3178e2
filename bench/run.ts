/**
 * `npm run bench [-- <group>...]`: the speed targets, measured, one JSON line each. Targets are reported
 * beside the figures; nothing here fails a build. Groups: append, list, graph, overlay, sse, proxy, forge, scale, eval, sessions, paneio, gateway, dashboard, sync, login, gateway-proxy, evidence, speed, agents (default: all).
 */
import { graphBench, overlayBench, sseBench } from './graph.js';
import { appendBench, listBench } from './issues.js';
import { proxyBench } from './proxy.js';
import { forgeBench } from './forge.js';
import { scaleBench } from './scale.js';
import { evalBench } from './eval.js';
import { sessionsBench } from './sessions.js';
import { paneioBench } from './paneio.js';
import { gatewayBench } from './gateway.js';
import { gatewayProxyBench } from './gateway-proxy.js';
import { dashboardBench } from './dashboard.js';
import { syncBench } from './sync.js';
import { agentsBench } from './agents.js';
import { loginBench } from './login.js';
import { evidenceBench } from './evidence.js';
import { speedBench } from './speed.js';

const groups: Record<string, () => Promise<void>> = { append: appendBench, list: listBench, graph: graphBench, overlay: overlayBench, sse: sseBench, proxy: proxyBench, forge: forgeBench, scale: scaleBench, eval: evalBench, sessions: sessionsBench, paneio: paneioBench, gateway: gatewayBench, dashboard: dashboardBench, sync: syncBench, login: loginBench, 'gateway-proxy': gatewayProxyBench, evidence: evidenceBench, speed: speedBench, agents: agentsBench };
const chosen = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(groups);
for (const name of chosen) {
  const run = groups[name];
  if (!run) throw new Error(`unknown bench group '${name}'; groups: ${Object.keys(groups).join(', ')}`);
  await run();
}
