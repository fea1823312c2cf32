import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

/** WebAuthn authenticator data flags (WebAuthn Level 3 §6.1): user present, user verified, attested credential data. */
const flags = { up: 0x01, uv: 0x04, at: 0x40 };

/**
 * An authenticator in software, for HTTP-level tests of passkeys: one ES256 credential, attestation
 * `none`, answering the server's options as a browser's `navigator.credentials` would. Where a test
 * needs the browser itself, Chromium's CDP virtual authenticator stands in instead.
 */
export class SoftAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  private counter = 0;
  /** The user handle the server gave at registration (the user's id). */
  private userHandle: string | undefined;

  constructor(
    /** The origin the browser would report (the service's public origin). */
    readonly origin: string,
  ) {}

  private get rpIdHash() {
    return sha256(new URL(this.origin).hostname);
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string) {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  /** The answer to registration options: a new credential for the user they name. */
  register(options: { challenge: string; user: { id: string } }) {
    this.userHandle = Buffer.from(options.user.id, 'base64url').toString('utf8');
    const jwk = (this.keys.publicKey as KeyObject).export({ format: 'jwk' });
    // COSE_Key (RFC 9053 §7.1.1): kty EC2, alg ES256, crv P-256, x, y.
    const coseKey = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ]);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([
      this.rpIdHash,
      Buffer.from([flags.up | flags.uv | flags.at]),
      Buffer.alloc(4),
      Buffer.alloc(16),
      idLength,
      this.credentialId,
      Buffer.from(isoCBOR.encode(coseKey)),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]) as never,
    );
    return {
      id: b64url(this.credentialId),
      rawId: b64url(this.credentialId),
      type: 'public-key',
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
    };
  }

  /** The answer to authentication options: this credential's signature over the challenge, its counter moved on. */
  authenticate(options: { challenge: string }) {
    this.counter += 1;
    const count = Buffer.alloc(4);
    count.writeUInt32BE(this.counter);
    const authenticatorData = Buffer.concat([this.rpIdHash, Buffer.from([flags.up | flags.uv]), count]);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge);
    const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), this.keys.privateKey);
    return {
      id: b64url(this.credentialId),
      rawId: b64url(this.credentialId),
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authenticatorData),
        signature: b64url(signature),
        ...(this.userHandle && { userHandle: Buffer.from(this.userHandle).toString('base64url') }),
      },
      clientExtensionResults: {},
    };
  }
}
