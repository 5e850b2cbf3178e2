import { describe, expect, it } from 'vitest';
import { DEFAULT_NOTIFY, parseNotifyConfig } from './notify-config.js';

describe('hub.json notify', () => {
  it('absent: nobody is told, waits are debounced 5 s', () => {
    expect(parseNotifyConfig(undefined)).toEqual(DEFAULT_NOTIFY);
    expect(DEFAULT_NOTIFY.debounceMs).toBe(5000);
  });

  it('reads targets with the events each wants (every kind by default: ntfy replaces a wait with its withdraw)', () => {
    const n = parseNotifyConfig({
      targets: [
        { type: 'webhook', url: 'https://hooks.example.com/t' },
        { type: 'ntfy', url: 'https://ntfy.sh/topic' },
        { type: 'command', command: ['/bin/tell', '-q'], events: ['wait'] },
      ],
      mute: ['p1'],
      quietHours: { from: '22:00', to: '07:00' },
      debounceMs: 0,
      turnEnd: true,
      publicUrl: 'https://box.example/',
    });
    expect(n.targets.map((t) => t.events)).toEqual([['wait', 'turn-end', 'withdraw'], ['wait', 'turn-end', 'withdraw'], ['wait']]);
    expect(n).toMatchObject({ mute: ['p1'], quietHours: { from: '22:00', to: '07:00' }, debounceMs: 0, turnEnd: true, publicUrl: 'https://box.example/' });
  });

  it.each<[string, unknown, RegExp]>([
    ['not an object', 'yes', /notify must be an object/],
    ['a target without a type', { targets: [{ url: 'https://x' }] }, /targets\[0\]\.type must be "webhook", "ntfy" or "command"/],
    ['a webhook that is not http(s)', { targets: [{ type: 'webhook', url: 'file:///etc/passwd' }] }, /targets\[0\]\.url must be an http:\/\/ or https:\/\/ URL/],
    ['a command as a shell string', { targets: [{ type: 'command', command: 'notify-send hi' }] }, /targets\[0\]\.command must be a program and its arguments/],
    ['an unknown event', { targets: [{ type: 'ntfy', url: 'https://ntfy.sh/t', events: ['everything'] }] }, /targets\[0\]\.events must be a list of "wait", "turn-end", "withdraw"/],
    ['quiet hours not HH:MM', { quietHours: { from: '10pm', to: '07:00' } }, /quietHours must be \{"from":"HH:MM","to":"HH:MM"\}/],
    ['a negative debounce', { debounceMs: -1 }, /debounceMs must be a whole number from 0 to 3600000/],
    ['mute not a list', { mute: 'p1' }, /mute must be a list of project ids/],
    ['publicUrl not a URL', { publicUrl: 'box' }, /publicUrl must be the http\(s\) URL/],
  ])('%s: a loud error naming the key', (_name, raw, message) => {
    expect(() => parseNotifyConfig(raw)).toThrow(message);
  });
});
