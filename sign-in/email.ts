import type { Logger } from '../lib/logger.js';
import { onFirstUse } from '../lib/on-first-use.js';

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Where verification codes go. A host may pass its own (a transactional-mail API, say). */
export interface EmailConnector {
  /** Shown at startup: which connector sends. */
  readonly description: string;
  /** Writes instead of sending: fit for development only, and said so at startup. */
  readonly development?: boolean;
  send(message: EmailMessage): Promise<void>;
}

/** SMTP through nodemailer; `smtpUrl` as nodemailer reads it (`smtps://user:pass@host:465`). */
export function smtpConnector(smtpUrl: string, from: string): EmailConnector {
  // nodemailer, loaded with the first message.
  const transport = onFirstUse(async () => (await import('nodemailer')).default.createTransport(smtpUrl));
  return {
    description: `SMTP (${new URL(smtpUrl).host}), from ${from}`,
    async send({ to, subject, text }) {
      await (await transport()).sendMail({ from, to, subject, text });
    },
  };
}

/** For development only: writes each message to the log instead of sending it. */
export function logConnector(logger: Logger): EmailConnector {
  return {
    description: 'the development connector: no SMTP_URL is set, so verification codes are written to this log, not sent',
    development: true,
    async send({ to, subject, text }) {
      logger.info(`[email to ${to}] ${subject}\n${text}`);
    },
  };
}
