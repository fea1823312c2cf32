import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Seals a factor's secret (a TOTP key) for storage: AES-256-GCM under the MFA key, a fresh IV
 * each time, the user's id as additional data (a sealed secret moved to another user does not
 * open). The key comes from `MFA_ENCRYPTION_KEY`, or is made once and kept in the `system`
 * collection; a copy of the users alone reveals no secret.
 */
export function secretBox(key: Buffer) {
  if (key.length !== 32) throw new TypeError('the MFA encryption key must be 32 bytes');
  return {
    seal(plain: string, userId: string): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
      cipher.setAAD(Buffer.from(userId));
      const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `v1.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
    },
    open(sealed: string, userId: string): string {
      const [version, iv, body] = sealed.split('.');
      if (version !== 'v1' || !iv || !body) throw new TypeError('not a sealed secret');
      const bytes = Buffer.from(body, 'base64url');
      // The whole 16-byte tag, always: a shorter one would be accepted and easier to forge.
      if (bytes.length < 16) throw new TypeError('not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
      decipher.setAAD(Buffer.from(userId));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
    },
  };
}

export type SecretBox = ReturnType<typeof secretBox>;
