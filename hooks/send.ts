import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';

import type { OutboundPolicy } from '../lib/outbound-addresses.js';

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface SendResult {
  /** A 2xx answer. */
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  /** The first bytes of the answer, as text. */
  response: string | null;
  /** Why the attempt failed, in a sentence (a status, a refusal, a timeout). */
  error: string | null;
  /** What `Retry-After` asked for, in milliseconds. */
  retryAfterMs: number | null;
}

export type Sender = (request: SendRequest) => Promise<SendResult>;

const excerptBytes = 2048;

/** `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** Reads at most `limit` bytes of a response and drains the rest, so that the connection can be reused. */
function excerpt(response: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      if (size < limit) chunks.push(chunk.subarray(0, limit - size));
      size += chunk.length;
    });
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', reject);
  });
}

/**
 * Sends one POST over node:http(s), through the outbound policy: names are resolved and every
 * address checked before connecting (and the connection goes to a checked address, so a second
 * resolution cannot swap it), IP literals are checked directly, and redirects are never followed.
 */
export function createSender({ policy, timeoutMs }: { policy: OutboundPolicy; timeoutMs: number }): Sender & { close(): void } {
  const agents = {
    'http:': new HttpAgent({ keepAlive: true }),
    'https:': new HttpsAgent({ keepAlive: true }),
  };

  const send: Sender = ({ url, headers, body }) =>
    new Promise((resolve) => {
      const started = performance.now();
      const done = (result: Omit<SendResult, 'durationMs'>) => resolve({ ...result, durationMs: Math.round(performance.now() - started) });
      const failed = (error: string) => done({ ok: false, statusCode: null, response: null, error, retryAfterMs: null });

      let target: URL;
      try {
        target = new URL(url);
        if (target.protocol !== 'http:' && target.protocol !== 'https:') return failed(`the URL's scheme ${target.protocol} is not http or https`);
        const literal = target.hostname.replace(/^\[|\]$/g, '');
        if (isIP(literal)) policy.check(literal, literal);
      } catch (error) {
        return failed((error as Error).message);
      }

      const request = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, {
        method: 'POST',
        agent: agents[target.protocol as keyof typeof agents],
        lookup: policy.lookup,
        headers: { ...headers, 'content-length': String(body.length) },
      });
      // One limit for the whole attempt: connecting, sending and reading the answer.
      const timer = setTimeout(() => request.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      request.on('error', (error) => {
        clearTimeout(timer);
        failed(error.message);
      });
      request.on('response', (response) => {
        excerpt(response, excerptBytes).then(
          (text) => {
            clearTimeout(timer);
            const statusCode = response.statusCode ?? 0;
            const ok = statusCode >= 200 && statusCode < 300;
            const redirect = statusCode >= 300 && statusCode < 400;
            done({
              ok,
              statusCode,
              response: text || null,
              error: ok ? null : redirect ? `answered ${statusCode}; redirects are not followed` : `answered ${statusCode}`,
              retryAfterMs: retryAfterMs(response.headers['retry-after']),
            });
          },
          (error: Error) => {
            clearTimeout(timer);
            failed(error.message);
          },
        );
      });
      request.end(body);
    });

  return Object.assign(send, {
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  });
}
