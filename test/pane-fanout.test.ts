import { createRequire } from 'node:module';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { binaryFrame } from '../src/http/ws-frame.js';
import { PaneHub, type Viewer } from '../src/store/sessions/tmux/pane-stream.js';
import { cleanupRepos, tempDir } from './helpers/repo.js';
import { testTmux, type TestTmux } from './helpers/tmux.js';
import { waitFor } from './helpers/wait.js';

/*
 * Pane output encoded once (issue 22): every chunk of a pane's output is framed once, and the very same
 * bytes go to every viewer. A real tmux pane, the real pane hub and its real control client.
 */

const servers: TestTmux[] = [];
afterEach(() => servers.splice(0).forEach((t) => t.kill()));
afterAll(() => cleanupRepos());

/** A viewer that records what the hub hands it. */
function recorder(framed: boolean): Viewer & { frames: Buffer[]; bytes: Buffer[]; ready: boolean } {
  const v = {
    frames: [] as Buffer[],
    bytes: [] as Buffer[],
    ready: false,
    sendBytes: (b: Buffer) => void v.bytes.push(b),
    sendJson: (m: object) => void ((m as { type: string }).type === 'state' && (v.ready = true)),
    buffered: () => 0,
    close: () => {},
    ...(framed ? { sendFramed: (f: Buffer) => void v.frames.push(f) } : {}),
  };
  return v;
}

/** `ws`'s frame parser: exported by the package, though not by its type declarations. */
interface FrameReceiver {
  on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): void;
  on(event: 'error', listener: (err: Error) => void): void;
  write(chunk: Buffer): void;
  end(done: () => void): void;
}
const { Receiver } = createRequire(import.meta.url)('ws') as { Receiver: new (opts: { isServer: boolean; maxPayload: number }) => FrameReceiver };

/** The payloads of frames, decoded by `ws`'s own receiver (what a browser's WebSocket does). */
function decode(frames: readonly Buffer[]): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    const r = new Receiver({ isServer: false, maxPayload: 0 });
    r.on('message', (data: Buffer, isBinary: boolean) => (isBinary ? out.push(Buffer.from(data)) : reject(new Error('a text frame'))));
    r.on('error', reject);
    for (const f of frames) r.write(f);
    r.end(() => resolve(out));
  });
}

describe('pane output framed once for every viewer', () => {
  it('frames a chunk once and hands every viewer the same Buffer; a viewer without framing gets the same bytes', async () => {
    const home = tempDir();
    const tmux = testTmux(home);
    servers.push(tmux);
    await tmux.session('fan');
    const pane = tmux.display('fan', '#{pane_id}');
    let framings = 0;
    const hub = new PaneHub(undefined, undefined, (b) => (framings++, binaryFrame(b)));
    const target = { socket: tmux.socket, session: 'fan', pane };
    const viewers = [recorder(true), recorder(true), recorder(true)];
    const plain = recorder(false);
    for (const v of [...viewers, plain]) hub.join(target, v);
    await waitFor(() => [...viewers, plain].every((v) => v.ready), 'every viewer to be live');
    const start = viewers.map((v) => v.frames.length);
    const framingsBefore = framings;
    const plainStart = plain.bytes.length;
    tmux.run('send-keys', '-t', pane, 'for i in $(seq 1 3000); do echo line-$i-of-output; done; echo FAN-$((1+1))-DONE', 'Enter');
    await waitFor(() => Buffer.concat(plain.bytes.slice(plainStart)).includes('FAN-2-DONE'), 'the output to reach the plain viewer', 20_000);
    await waitFor(() => viewers.every((v) => v.frames.length - start[0]! === plain.bytes.length - plainStart), 'the framed viewers to catch up');

    const got = viewers.map((v, i) => v.frames.slice(start[i]));
    const plainGot = Buffer.concat(plain.bytes.slice(plainStart));
    // One framing per chunk, whatever the number of viewers...
    expect(framings - framingsBefore).toBe(got[0]!.length);
    // ...and the very same Buffer for each of them (not equal copies: the same object).
    for (const frames of got.slice(1)) frames.forEach((f, k) => expect(f).toBe(got[0]![k]));
    // Many output lines read together go out as one chunk: far fewer chunks than lines.
    expect(got[0]!.length).toBeLessThan(1500);
    // The frames carry exactly the bytes the unframed viewer got.
    const payloads = await decode(got[0]!);
    expect(Buffer.concat(payloads).equals(plainGot)).toBe(true);
    expect(Buffer.concat(payloads).toString()).toContain('line-2999-of-output');
    for (const v of [...viewers, plain]) hub.leave(v);
  });

  it('frames payloads of every length class as a WebSocket reader reads them', async () => {
    const sizes = [0, 1, 125, 126, 65_535, 65_536, 300_000];
    const payloads = sizes.map((n) => Buffer.alloc(n, n % 251));
    const decoded = await decode(payloads.map(binaryFrame));
    expect(decoded.map((d) => d.length)).toEqual(sizes);
    decoded.forEach((d, i) => expect(d.equals(payloads[i]!)).toBe(true));
  });
});
