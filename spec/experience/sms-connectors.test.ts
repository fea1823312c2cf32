import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { httpSmsConnector, SmsSendError, twilioSmsConnector } from '../../sign-in/sms.js';
import { ConfigError, loadSettings } from '../../settings.js';

interface Captured {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A local HTTP server that keeps each request and answers as `answer` says. */
async function startGateway(answer: (request: Captured) => { status: number; body: string; type?: string }) {
  const requests: Captured[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const captured = { method: req.method!, path: req.url!, headers: req.headers, body };
      requests.push(captured);
      const { status, body: answerBody, type = 'application/json' } = answer(captured);
      res.writeHead(status, { 'content-type': type }).end(answerBody);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('SMS connectors', () => {
  describe('the generic HTTP connector', () => {
    it('POSTs the filled JSON template with its auth header; what a message says cannot change the body', async () => {
      const gateway = await startGateway(() => ({ status: 202, body: '{"queued":true}' }));
      try {
        const sms = httpSmsConnector({
          url: `${gateway.url}/send`,
          authHeader: 'X-Api-Key: secret-key-1',
          bodyTemplate: '{"message":{"recipient":"{{to}}","content":"Code: {{text}}"},"channel":"sms","tags":["{{to}}"]}',
        });
        const text = 'your code is 123456 "},"channel":"voice {{to}}\nbye';
        await sms.send({ to: '61412345678', text });
        const [request] = gateway.requests;
        expect(request).toMatchObject({ method: 'POST', path: '/send' });
        expect(request.headers).toMatchObject({ 'x-api-key': 'secret-key-1', 'content-type': 'application/json' });
        expect(JSON.parse(request.body)).toEqual({
          message: { recipient: '+61412345678', content: `Code: ${text}` },
          channel: 'sms',
          tags: ['+61412345678'],
        });
      } finally {
        await gateway.close();
      }
    });

    it('uses {"to","text"} by default, and reports a refusal or an unreachable gateway as SmsSendError', async () => {
      const gateway = await startGateway(({ body }) =>
        JSON.parse(body).to === '+15550000000' ? { status: 400, body: 'unknown number' } : { status: 200, body: '' },
      );
      try {
        const sms = httpSmsConnector({ url: gateway.url });
        await sms.send({ to: '12125550100', text: 'hello' });
        expect(JSON.parse(gateway.requests[0].body)).toEqual({ to: '+12125550100', text: 'hello' });
        await expect(sms.send({ to: '15550000000', text: 'hello' })).rejects.toThrow(
          new SmsSendError(`the SMS gateway at ${new URL(gateway.url).host} answered 400: unknown number`),
        );
      } finally {
        await gateway.close();
      }
      // Port 1 (tcpmux) answers nothing here: a closed gateway's port could be taken by another test's server.
      await expect(httpSmsConnector({ url: 'http://127.0.0.1:1/send' }).send({ to: '12125550100', text: 'x' })).rejects.toBeInstanceOf(SmsSendError);
    });
  });

  describe("Twilio's Messages API", () => {
    const accountSid = `AC${'0123456789abcdef'.repeat(2)}`;
    const authToken = 'twilio-auth-token-0123';
    /** Answers as Twilio's Messages API does: 201 with the message, or 400 with an error object. */
    const twilio = (request: Captured) => {
      const form = new URLSearchParams(request.body);
      if (form.get('To') === '+15005550001') {
        return { status: 400, body: JSON.stringify({ code: 21211, message: "The 'To' number +15005550001 is not a valid phone number.", status: 400 }) };
      }
      return { status: 201, body: JSON.stringify({ sid: `SM${'a'.repeat(32)}`, status: 'queued', to: form.get('To'), body: form.get('Body') }) };
    };

    it('sends To, From and Body form-encoded to the account’s Messages resource with Basic authentication', async () => {
      const gateway = await startGateway(twilio);
      try {
        await twilioSmsConnector({ accountSid, authToken, from: '+15005550006', apiUrl: gateway.url }).send({ to: '61412345678', text: 'Your code: 123456' });
        const [request] = gateway.requests;
        expect(request.path).toBe(`/2010-04-01/Accounts/${accountSid}/Messages.json`);
        expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
        expect(request.headers.authorization).toBe(`Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`);
        expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({ To: '+61412345678', From: '+15005550006', Body: 'Your code: 123456' });
      } finally {
        await gateway.close();
      }
    });

    it('sends through a Messaging Service instead of a number, and reports Twilio’s error', async () => {
      const gateway = await startGateway(twilio);
      try {
        const sms = twilioSmsConnector({ accountSid, authToken, messagingServiceSid: `MG${'1'.repeat(32)}`, apiUrl: `${gateway.url}/` });
        await sms.send({ to: '12125550100', text: 'hi' });
        expect(Object.fromEntries(new URLSearchParams(gateway.requests[0].body))).toEqual({
          To: '+12125550100',
          MessagingServiceSid: `MG${'1'.repeat(32)}`,
          Body: 'hi',
        });
        const refused = sms.send({ to: '15005550001', text: 'hi' });
        await expect(refused).rejects.toBeInstanceOf(SmsSendError);
        await expect(refused).rejects.toThrow(/Twilio answered 400: .*21211/);
      } finally {
        await gateway.close();
      }
    });
  });

  describe('SMS_* settings', () => {
    it.each([
      [{ SMS_CONNECTOR: 'http' }, /SMS_CONNECTOR=http needs SMS_HTTP_URL/],
      [{ SMS_CONNECTOR: 'http', SMS_HTTP_URL: 'https://sms.example.com', SMS_HTTP_BODY_TEMPLATE: '{to: {{to}}}' }, /SMS_HTTP_BODY_TEMPLATE must be JSON/],
      [
        { SMS_CONNECTOR: 'http', SMS_HTTP_URL: 'https://sms.example.com', SMS_HTTP_AUTH_HEADER: 'Authorization: Bearer x\r\nInjected: 1' },
        /SMS_HTTP_AUTH_HEADER/,
      ],
      [{ SMS_CONNECTOR: 'twilio', SMS_TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}` }, /needs SMS_TWILIO_ACCOUNT_SID and SMS_TWILIO_AUTH_TOKEN/],
      [
        { SMS_CONNECTOR: 'twilio', SMS_TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`, SMS_TWILIO_AUTH_TOKEN: 'token-0123456789abcdef' },
        /exactly one of SMS_TWILIO_FROM or SMS_TWILIO_MESSAGING_SERVICE_SID/,
      ],
      [{ SMS_CONNECTOR: 'pigeon' }, /SMS_CONNECTOR/],
    ])('refuses %j at startup', (env, message) => {
      expect(() => loadSettings(env)).toThrow(ConfigError);
      expect(() => loadSettings(env)).toThrow(message);
    });

    it('reads each connector’s settings; the log connector by default', () => {
      expect(loadSettings({}).experience.sms).toEqual({ kind: 'log' });
      expect(
        loadSettings({ SMS_CONNECTOR: 'http', SMS_HTTP_URL: 'https://sms.example.com/send', SMS_HTTP_AUTH_HEADER: 'Authorization: Bearer t' }).experience.sms,
      ).toEqual({ kind: 'http', url: 'https://sms.example.com/send', authHeader: 'Authorization: Bearer t' });
      expect(
        loadSettings({
          SMS_CONNECTOR: 'twilio',
          SMS_TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`,
          SMS_TWILIO_AUTH_TOKEN: 'token-0123456789abcdef',
          SMS_TWILIO_FROM: '+15005550006',
        }).experience.sms,
      ).toEqual({
        kind: 'twilio',
        accountSid: `AC${'0'.repeat(32)}`,
        authToken: 'token-0123456789abcdef',
        from: '+15005550006',
        apiUrl: 'https://api.twilio.com',
      });
    });
  });
});
