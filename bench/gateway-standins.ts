/**
 * Lightweight stand-in backends for the gateway bench, in a process of their own: one real HTTP server
 * per root (argv: a JSON list of roots), each answering /api/instance as a serve would and /api/graph
 * with a small board, and echoing on WebSockets. Prints `{ports, instanceIds}` as one JSON line.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { WebSocketServer } from 'ws';

const roots = JSON.parse(process.argv[2] ?? '[]') as string[];
const ports: number[] = [];
const instanceIds: string[] = [];
for (const root of roots) {
  const instanceId = randomUUID();
  const graph = JSON.stringify({ version: 1, nodes: [{ id: 'index', openIssues: [{ id: 'a' }, { id: 'b' }] }], sessions: [] });
  const server = http.createServer((req, res) => {
    if (req.url === '/api/instance') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ instanceId, root }));
    }
    if (req.headers['if-none-match'] === '"g1"') {
      res.writeHead(304, { etag: '"g1"' });
      return res.end();
    }
    res.writeHead(200, { 'content-type': 'application/json', etag: '"g1"' });
    res.end(graph);
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.on('message', (m, binary) => ws.send(m, { binary })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  ports.push((server.address() as { port: number }).port);
  instanceIds.push(instanceId);
}
process.stdout.write(`${JSON.stringify({ ports, instanceIds })}\n`);
