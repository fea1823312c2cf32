import type { Logger } from '../lib/logger.js';

/** A text message to a phone number, in its stored form (E.164 digits, lib/phone.ts). */
export interface SmsMessage {
  to: string;
  text: string;
}

/** Where phone verification codes go. A host may pass its own (an SMS gateway's SDK, say). */
export interface SmsConnector {
  /** Shown at startup: which connector sends. */
  readonly description: string;
  /** Writes instead of sending: fit for development only, and said so at startup. */
  readonly development?: boolean;
  /** Resolves once the gateway accepted the message; rejects with an `SmsSendError` otherwise. */
  send(message: SmsMessage): Promise<void>;
}

/** The gateway refused the message or could not be reached: the reason for the operator's log, never for the caller. */
export class SmsSendError extends Error {
  override name = 'SmsSendError';
}

/** How long a gateway may take to accept a message. */
const sendTimeoutMs = 10_000;

async function post(url: string, init: RequestInit, gateway: string): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, method: 'POST', redirect: 'error', signal: AbortSignal.timeout(sendTimeoutMs) });
  } catch (error) {
    throw new SmsSendError(`${gateway} could not be reached: ${(error as Error).message}`);
  }
  if (!response.ok) {
    const body = (await response.text().catch(() => '')).slice(0, 500);
    throw new SmsSendError(`${gateway} answered ${response.status}: ${body}`);
  }
  return response;
}

/** For development only: writes each message to the log instead of sending it. */
export function logSmsConnector(logger: Logger): SmsConnector {
  return {
    description: 'the development connector: no SMS gateway is configured, so phone codes are written to this log, not sent',
    development: true,
    async send({ to, text }) {
      logger.info(`[sms to +${to}] ${text}`);
    },
  };
}

/**
 * Fills a JSON body template: every string in it has `{{to}}` (the number in E.164, with its `+`)
 * and `{{text}}` replaced. The template is parsed first and filled value by value, so that what a
 * message says can never change the body's structure.
 */
export function fillTemplate(template: unknown, { to, text }: SmsMessage): unknown {
  if (typeof template === 'string') return template.replaceAll('{{to}}', `+${to}`).replaceAll('{{text}}', text);
  if (Array.isArray(template)) return template.map((item) => fillTemplate(item, { to, text }));
  if (template !== null && typeof template === 'object') {
    return Object.fromEntries(Object.entries(template).map(([key, value]) => [key, fillTemplate(value, { to, text })]));
  }
  return template;
}

export const defaultSmsBodyTemplate = '{"to":"{{to}}","text":"{{text}}"}';

export interface HttpSmsOptions {
  /** Where the JSON body is POSTed. */
  url: string;
  /** One header that authenticates us to the gateway, as `Name: value` (`Authorization: Bearer ...`). */
  authHeader?: string;
  /** The body, as JSON with `{{to}}` and `{{text}}` in its strings (`defaultSmsBodyTemplate` by default). */
  bodyTemplate?: string;
}

/** A generic HTTP gateway: one JSON POST per message; any 2xx is accepted. */
export function httpSmsConnector({ url, authHeader, bodyTemplate = defaultSmsBodyTemplate }: HttpSmsOptions): SmsConnector {
  const template: unknown = JSON.parse(bodyTemplate);
  const colon = authHeader?.indexOf(':') ?? -1;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authHeader && colon > 0) headers[authHeader.slice(0, colon).trim()] = authHeader.slice(colon + 1).trim();
  return {
    description: `an HTTP gateway (${new URL(url).host})`,
    async send(message) {
      await post(url, { headers, body: JSON.stringify(fillTemplate(template, message)) }, `the SMS gateway at ${new URL(url).host}`);
    },
  };
}

export interface TwilioOptions {
  accountSid: string;
  authToken: string;
  /** The sending number (E.164) or, instead, a Messaging Service. */
  from?: string;
  messagingServiceSid?: string;
  /** Twilio's API origin; a test points it at a local server that speaks the Messages API. */
  apiUrl?: string;
}

/**
 * Twilio's Messages API over `fetch` (no SDK): `POST /2010-04-01/Accounts/{AccountSid}/Messages.json`,
 * form-encoded `To`, `Body` and `From` or `MessagingServiceSid`, with HTTP Basic authentication; Twilio
 * answers 201 with the message, or an error object (`code`, `message`) that the log keeps.
 */
export function twilioSmsConnector({ accountSid, authToken, from, messagingServiceSid, apiUrl = 'https://api.twilio.com' }: TwilioOptions): SmsConnector {
  const url = `${apiUrl.replace(/\/$/, '')}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
  return {
    description: `Twilio (${from ? `from ${from}` : `messaging service ${messagingServiceSid}`})`,
    async send({ to, text }) {
      const form = new URLSearchParams({ To: `+${to}`, Body: text, ...(from ? { From: from } : { MessagingServiceSid: messagingServiceSid! }) });
      await post(url, { headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() }, 'Twilio');
    },
  };
}
