import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify, type ECDH } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

/**
 * A Web Push service stand-in on loopback (HTTPS, a throwaway certificate): it checks each push's VAPID
 * JWT (RFC 8292: ES256 over the key the `k` parameter names, audience this origin, expiry within 24 h)
 * and decrypts its body with the subscription's own keys (RFC 8291: ECDH P-256, HKDF-SHA-256,
 * AES-128-GCM, one aes128gcm record), the way a browser does, with node:crypto only. It answers 201,
 * or whatever `answer` is set to (410: the subscription is gone).
 */
export interface PushService {
  readonly origin: string;
  /** A browser's subscription with its private half, for `/hub/push/subscriptions`. */
  subscription(path: string): { endpoint: string; keys: { p256dh: string; auth: string } };
  /** Every push received: the decrypted payload, the VAPID claims and the key it was signed with. */
  readonly received: { path: string; payload: unknown; claims: { aud: string; exp: number; sub: string }; k: string; ttl: string | undefined }[];
  /** Pushes refused before decryption, with why. */
  readonly refused: string[];
  answer: number;
  close(): Promise<void>;
}

const b64u = (b: Buffer): string => b.toString('base64url');

function checkVapid(authorization: string | undefined, origin: string): { claims: { aud: string; exp: number; sub: string }; k: string } {
  const m = /^vapid t=([\w-]+\.[\w-]+\.[\w-]+), k=([\w-]+)$/.exec(authorization ?? '');
  if (!m) throw new Error(`Authorization is not 'vapid t=…, k=…': ${authorization}`);
  const [jwt, k] = [m[1]!, m[2]!];
  const [h, p, s] = jwt.split('.') as [string, string, string];
  const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg?: string; typ?: string };
  if (header.alg !== 'ES256') throw new Error(`JWT alg ${header.alg}`);
  const point = Buffer.from(k, 'base64url');
  if (point.length !== 65 || point[0] !== 4) throw new Error('k is not an uncompressed P-256 point');
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: b64u(point.subarray(1, 33)), y: b64u(point.subarray(33)) }, format: 'jwk' });
  if (!verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'))) throw new Error('the JWT signature does not verify');
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { aud: string; exp: number; sub: string };
  const now = Date.now() / 1000;
  if (claims.aud !== origin) throw new Error(`aud ${claims.aud} is not ${origin}`);
  if (!(claims.exp > now && claims.exp <= now + 24 * 3600 + 60)) throw new Error(`exp ${claims.exp} out of range`);
  if (!/^(mailto:|https:)/.test(claims.sub)) throw new Error(`sub ${claims.sub}`);
  return { claims, k };
}

/** RFC 8291 §3.4 and RFC 8188: the one-record aes128gcm body, decrypted with the user agent's keys. */
function decrypt(body: Buffer, ua: ECDH, authSecret: Buffer): Buffer {
  const salt = body.subarray(0, 16);
  const idlen = body[20]!;
  const asPublic = body.subarray(21, 21 + idlen);
  const record = body.subarray(21 + idlen);
  const ecdhSecret = ua.computeSecret(asPublic);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), ua.getPublicKey(), asPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', ecdhSecret, authSecret, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Error('no last-record delimiter (0x02)');
  return padded.subarray(0, end);
}

export async function startPushService(tls: { cert: string; key: string }): Promise<PushService> {
  const devices = new Map<string, { ua: ECDH; auth: Buffer }>();
  const service: PushService = {
    origin: '',
    received: [],
    refused: [],
    answer: 201,
    subscription(path) {
      const ua = createECDH('prime256v1');
      ua.generateKeys();
      const auth = randomBytes(16);
      devices.set(path, { ua, auth });
      return { endpoint: `${service.origin}${path}`, keys: { p256dh: b64u(ua.getPublicKey()), auth: b64u(auth) } };
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
  const server = https.createServer(tls, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const path = req.url ?? '';
      try {
        const device = devices.get(path);
        if (!device) throw new Error(`no subscription at ${path}`);
        if (req.method !== 'POST' || req.headers['content-encoding'] !== 'aes128gcm') throw new Error(`${req.method} with Content-Encoding ${req.headers['content-encoding']}`);
        const { claims, k } = checkVapid(req.headers.authorization, service.origin);
        if (service.answer !== 201) {
          res.writeHead(service.answer).end();
          return;
        }
        const payload = JSON.parse(decrypt(Buffer.concat(chunks), device.ua, device.auth).toString('utf8')) as unknown;
        service.received.push({ path, payload, claims, k, ttl: req.headers.ttl as string | undefined });
        res.writeHead(201).end();
      } catch (err) {
        service.refused.push((err as Error).message);
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  (service as { origin: string }).origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return service;
}
