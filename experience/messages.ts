import type { Logger } from '../lib/logger.js';
import type { CodeTarget } from './codes.js';
import type { EmailConnector } from './email.js';
import type { SmsConnector } from './sms.js';

export interface CodeMessengerDeps {
  email: EmailConnector;
  sms: SmsConnector;
  productName: string;
  logger: Logger;
}

/**
 * Sends a verification code by mail or by text, off the request's path: an answer that waited for
 * the gateway would tell, by its time, whether a message went out. A failure is the operator's to
 * read in the log; the person asks again.
 */
export function codeMessenger({ email, sms, productName, logger }: CodeMessengerDeps) {
  return function sendCode({ type, value: to }: CodeTarget, code: string): void {
    const text = `Your ${productName} verification code is ${code}. It expires in 10 minutes.`;
    const sent =
      type === 'email'
        ? email.send({ to, subject: `${code} is your ${productName} verification code`, text: `${text}\n\nIf you did not ask for it, ignore this email.` })
        : sms.send({ to, text });
    sent.catch((error: unknown) => logger.error(`A verification code could not be sent to ${type === 'phone' ? `+${to}` : to}`, error));
  };
}

export type CodeMessenger = ReturnType<typeof codeMessenger>;
