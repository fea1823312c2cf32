import type { AddressInfo } from 'node:net';

import { SMTPServer } from 'smtp-server';

import { codeIn, takeNext } from './wait.js';

export interface Mail {
  to: string[];
  raw: string;
}

/** A real SMTP server on loopback that keeps every message it accepts. */
export interface MailCatcher {
  url: string;
  messages: Mail[];
  /** Waits for the next message to `to`, and answers the 6-digit code in it. */
  nextCode(to: string, timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

/** A message's body as text: after its headers, decoded as they say (nodemailer sends non-ASCII text quoted-printable or base64). */
export function bodyOf(raw: string): string {
  const split = raw.indexOf('\r\n\r\n') >= 0 ? raw.indexOf('\r\n\r\n') : raw.indexOf('\n\n');
  const [headers, body] = [raw.slice(0, split), raw.slice(split).trim()];
  if (/content-transfer-encoding:\s*base64/i.test(headers)) return Buffer.from(body, 'base64').toString('utf8');
  if (!/content-transfer-encoding:\s*quoted-printable/i.test(headers)) return body;
  const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

export async function startMailCatcher(): Promise<MailCatcher> {
  const messages: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        messages.push({ to: session.envelope.rcptTo.map(({ address }) => address.toLowerCase()), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const taken = new Set<Mail>();

  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async nextCode(to, timeoutMs = 10_000) {
      const mail = await takeNext(messages, taken, (message) => message.to.includes(to.toLowerCase()), `message to ${to}`, timeoutMs);
      return codeIn(bodyOf(mail.raw), `the message to ${to}`);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
