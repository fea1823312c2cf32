import type { AddressInfo } from 'node:net';

import { codeIn, takeNext } from './wait.js';
import { lastingServer } from './http-server.js';

export interface Text {
  to: string;
  text: string;
}

/**
 * A local SMS gateway for the generic HTTP connector (`SMS_CONNECTOR=http`): keeps every message
 * POSTed to it, as the default body template sends it (`{to, text}`, `to` in E.164 with its `+`).
 */
export interface SmsCatcher {
  /** The settings that point the server at this gateway. */
  env: Record<string, string>;
  texts: Text[];
  /** Waits for the next message to `to` (E.164, with its `+`), and answers the 6-digit code in it. */
  nextCode(to: string, timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

export async function startSmsCatcher(): Promise<SmsCatcher> {
  const texts: Text[] = [];
  const server = lastingServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.headers.authorization !== 'Bearer test-gateway-key') {
        res.writeHead(401).end();
        return;
      }
      texts.push(JSON.parse(body) as Text);
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"accepted":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/messages`;
  const taken = new Set<Text>();
  return {
    env: { SMS_CONNECTOR: 'http', SMS_HTTP_URL: url, SMS_HTTP_AUTH_HEADER: 'Authorization: Bearer test-gateway-key' },
    texts,
    async nextCode(to, timeoutMs = 10_000) {
      const text = await takeNext(texts, taken, (message) => message.to === to, `text to ${to}`, timeoutMs);
      return codeIn(text.text, `the text to ${to}`);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
