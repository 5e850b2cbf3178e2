/**
 * An HTTP-level proxy in Node with nothing checked, in a process of its own: every request is forwarded with a
 * bare `http.request` on a keep-alive agent and both bodies piped, nothing checked or rewritten
 * (argv: the target URL). Prints its port as one line.
 */
import http from 'node:http';

const target = new URL(process.argv[2]!);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const server = http.createServer((req, res) => {
  const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent }, (r) => {
    res.writeHead(r.statusCode ?? 502, r.headers);
    r.pipe(res);
  });
  up.on('error', () => res.destroy());
  req.pipe(up);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as { port: number }).port}\n`));
