import type { Logger } from '../lib/logger.js';
import type { CodeTarget } from './codes.js';
import type { EmailConnector } from './email.js';
import type { Catalogs } from '../i18n/index.js';
import type { SmsConnector } from './sms.js';

export interface CodeMessengerDeps {
  email: EmailConnector;
  sms: SmsConnector;
  productName: string;
  logger: Logger;
  /** The languages a code's message may be written in (English without). */
  catalogs?: Catalogs | undefined;
}

/**
 * Sends a verification code by mail or by text, in the language of the person who asked for it,
 * off the request's path: an answer that waited for the gateway would tell, by its time, whether
 * a message went out. A failure is the operator's to read in the log; the person asks again.
 */
export function codeMessenger({ email, sms, productName, logger, catalogs }: CodeMessengerDeps) {
  return function sendCode({ type, value: to }: CodeTarget, code: string, locale?: string): void {
    const t = catalogs?.forLocale(locale);
    const say = (key: 'message.code.subject' | 'message.code.text' | 'message.code.ignore', english: string) =>
      t ? t.t(key, { code, product: productName }) : english;
    const text = say('message.code.text', `Your ${productName} verification code is ${code}. It expires in 10 minutes.`);
    const sent =
      type === 'email'
        ? email.send({
            to,
            subject: say('message.code.subject', `${code} is your ${productName} verification code`),
            text: `${text}\n\n${say('message.code.ignore', 'If you did not ask for it, ignore this email.')}`,
          })
        : sms.send({ to, text });
    sent.catch((error: unknown) => logger.error(`A verification code could not be sent to ${type === 'phone' ? `+${to}` : to}`, error));
  };
}

export type CodeMessenger = ReturnType<typeof codeMessenger>;
