import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { lastingServer } from './http-server.js';

/**
 * samlify's identity provider, loaded without its types (they bring the DOM library into the whole
 * program): the calls this file makes, typed here.
 */
interface SamlifyEntity {
  entityMeta: unknown;
}
interface Samlify {
  setSchemaValidator(validator: { validate: (xml: string) => Promise<string> }): void;
  IdentityProvider(options: Record<string, unknown>): SamlifyEntity & {
    createLoginResponse(
      sp: SamlifyEntity,
      requestInfo: unknown,
      binding: 'post',
      user: Record<string, unknown>,
      customTagReplacement?: (template: string) => { id: string; context: string },
    ): Promise<{ context: string }>;
    getMetadata(): string;
  };
  ServiceProvider(options: Record<string, unknown>): SamlifyEntity;
  SamlLib: { replaceTagsByValue(template: string, values: Record<string, string>): string };
}
const samlify = createRequire(import.meta.url)('samlify') as Samlify;
// The IdP only writes responses here; our service provider (node-saml) is what validates them.
samlify.setSchemaValidator({ validate: async () => 'not used by an IdP that only signs' });

const fixtures = join(process.cwd(), 'spec', 'fixtures', 'saml');
const pem = (name: string) => readFileSync(join(fixtures, name), 'utf8');
const POST_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

export interface SamlPerson {
  nameId: string;
  email?: string;
  name?: string;
}

/** How the next responses are spoiled, for the refusals: none by default. */
export type SamlTamper = 'unsigned' | 'expired' | 'not-yet-valid' | 'wrong-audience' | 'wrong-recipient' | 'other-key' | 'unsolicited' | undefined;

export interface SamlIdp {
  url: string;
  entityId: string;
  /** The IdP's metadata (entity id, redirect-binding sign-in endpoint, signing certificate). */
  metadata: string;
  /** Its signing certificate, PEM. */
  certificate: string;
  signInAs(person: SamlPerson): void;
  tamper(mode: SamlTamper): void;
  /** The form the IdP would have the browser post: to the service provider's assertion consumer URL. */
  respond(signInUrl: string): Promise<{ acs: string; SAMLResponse: string; RelayState: string }>;
  close(): Promise<void>;
}

const escapeXml = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const escapeHtml = escapeXml;

/**
 * A SAML 2.0 identity provider in the test process, on samlify: `/sso` takes an AuthnRequest by the
 * HTTP-Redirect binding and answers, for the person `signInAs` named, a page that posts a signed
 * response to the request's assertion consumer URL (HTTP-POST), as a real IdP's page does.
 */
export async function startSamlIdp(): Promise<SamlIdp> {
  let person: SamlPerson = { nameId: 'nobody@example.com' };
  let mode: SamlTamper;
  const server = lastingServer((req, res) => handle(req, res).catch(() => res.writeHead(500).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const entityId = `${url}/metadata`;
  const certificate = pem('idp-cert.pem');
  const idpOf = (key: string, cert: string) =>
    samlify.IdentityProvider({
      entityID: entityId,
      privateKey: key,
      signingCert: cert,
      singleSignOnService: [{ Binding: REDIRECT_BINDING, Location: `${url}/sso` }],
      nameIDFormat: ['urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'],
    });
  const idp = idpOf(pem('idp-key.pem'), certificate);
  const impostor = idpOf(pem('other-key.pem'), pem('other-cert.pem'));

  /** The signed response to one AuthnRequest (its id, our entity id, our assertion consumer URL). */
  async function response(request: { id: string; issuer: string; acs: string }): Promise<string> {
    const sp = samlify.ServiceProvider({
      entityID: request.issuer,
      wantAssertionsSigned: true,
      assertionConsumerService: [{ Binding: POST_BINDING, Location: request.acs }],
    });
    const shift = mode === 'expired' ? -20 * 60_000 : mode === 'not-yet-valid' ? 20 * 60_000 : 0;
    const now = new Date(Date.now() + shift);
    const later = new Date(now.getTime() + 5 * 60_000);
    const attributes = [
      ['email', person.email],
      ['displayName', person.name],
    ]
      .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
      .map(
        ([name, value]) =>
          `<saml:Attribute Name="${name}"><saml:AttributeValue xsi:type="xs:string">${escapeXml(value)}</saml:AttributeValue></saml:Attribute>`,
      )
      .join('');
    const issuer = mode === 'other-key' ? impostor : idp;
    const made = await issuer.createLoginResponse(sp, { extract: { request: { id: request.id } } }, 'post', { email: person.nameId }, (template) => {
      const id = `_${Math.random().toString(36).slice(2)}${Date.now()}`;
      const values: Record<string, string> = {
        ID: id,
        AssertionID: `_a${Math.random().toString(36).slice(2)}${Date.now()}`,
        Destination: request.acs,
        Audience: mode === 'wrong-audience' ? 'https://another-service.example/sp' : request.issuer,
        EntityID: request.issuer,
        SubjectRecipient: mode === 'wrong-recipient' ? 'https://another-service.example/acs' : request.acs,
        Issuer: entityId,
        IssueInstant: now.toISOString(),
        AssertionConsumerServiceURL: request.acs,
        StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
        ConditionsNotBefore: now.toISOString(),
        ConditionsNotOnOrAfter: later.toISOString(),
        SubjectConfirmationDataNotOnOrAfter: later.toISOString(),
        NameIDFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
        NameID: person.nameId,
        InResponseTo: mode === 'unsolicited' ? '' : request.id,
        AuthnStatement: '',
        AttributeStatement: '',
      };
      // samlify escapes every value it puts in; the statements are XML, so they go in after, before signing.
      const statements =
        `<saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="${id}"><saml:AuthnContext><saml:AuthnContextClassRef>` +
        'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>' +
        (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '');
      return { id, context: samlify.SamlLib.replaceTagsByValue(template, values).replace('</saml:Conditions>', `</saml:Conditions>${statements}`) };
    });
    let xml = Buffer.from(made.context, 'base64').toString('utf8');
    // The signature taken off, as an attacker who edited the assertion would have to.
    if (mode === 'unsigned') xml = xml.replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/g, '');
    return Buffer.from(xml, 'utf8').toString('base64');
  }

  /** What an AuthnRequest (HTTP-Redirect: deflated, base64) asks: its id, the service provider, where to answer. */
  function readRequest(signIn: URL) {
    const xml = inflateRawSync(Buffer.from(signIn.searchParams.get('SAMLRequest') ?? '', 'base64')).toString('utf8');
    const attribute = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(xml)?.[1] ?? '';
    const issuer = /<(?:saml2?:)?Issuer[^>]*>([^<]*)</.exec(xml)?.[1] ?? '';
    return { id: attribute('ID'), acs: attribute('AssertionConsumerServiceURL'), issuer, relayState: signIn.searchParams.get('RelayState') ?? '' };
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const signIn = new URL(req.url ?? '/', url);
    if (signIn.pathname === '/metadata') {
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(idp.getMetadata());
      return;
    }
    if (signIn.pathname !== '/sso') {
      res.writeHead(404).end();
      return;
    }
    const request = readRequest(signIn);
    const SAMLResponse = await response(request);
    // A real IdP's page: a form the browser posts at once to the service provider.
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(
        `<!doctype html><html><body><form method="post" action="${escapeHtml(request.acs)}">` +
          `<input type="hidden" name="SAMLResponse" value="${escapeHtml(SAMLResponse)}"/>` +
          `<input type="hidden" name="RelayState" value="${escapeHtml(request.relayState)}"/>` +
          `<button type="submit">Continue</button></form><script>document.forms[0].submit()</script></body></html>`,
      );
  }

  return {
    url,
    entityId,
    metadata: idp.getMetadata(),
    certificate,
    signInAs(next) {
      person = next;
    },
    tamper(next) {
      mode = next;
    },
    async respond(signInUrl) {
      const request = readRequest(new URL(signInUrl));
      return { acs: request.acs, SAMLResponse: await response(request), RelayState: request.relayState };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
