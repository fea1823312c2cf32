import { ApiError } from '../lib/errors.js';
import { emailKey } from '../lib/identifiers.js';
import type { Logger } from '../lib/logger.js';
import type { Counters } from './counters.js';
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

/**
 * Sends organization invitations by email, awaited (a message that cannot go fails its request),
 * at most as many per address as verification codes (`codePerEmail`), counted apart from them.
 */
export function invitationMessenger({ email, productName, counters }: { email: EmailConnector; productName: string; counters: Counters }) {
  return async function sendInvitation(
    to: string,
    { organizationName, inviterName, link }: { organizationName: string; inviterName?: string | undefined; link?: string | undefined },
  ) {
    const attempt = await counters.hit('codePerEmail', `invitation:${emailKey(to)}`);
    if (attempt.over) {
      throw new ApiError('request.too_many_requests', `too many invitations to this address: try again in ${attempt.retryAfter} s`, {
        retryAfter: attempt.retryAfter,
      });
    }
    const who = inviterName ? `${inviterName} invites you` : 'You are invited';
    await email.send({
      to,
      subject: `${who} to join ${organizationName} on ${productName}`,
      text: [
        `${who} to join ${organizationName} on ${productName}.`,
        link ? `Accept the invitation: ${link}` : '',
        'If you did not expect it, ignore this email.',
      ]
        .filter(Boolean)
        .join('\n\n'),
    });
  };
}
